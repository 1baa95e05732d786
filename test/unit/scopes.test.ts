import { describe, expect, test } from "bun:test";
import { ALL_SCOPES, grants, isSubset, parseScopes, unknownScopes } from "../../src/auth/scopes.ts";

describe("scopes", () => {
  test("read and write cover their sub-scopes, follow covers relationship scopes", () => {
    expect(grants(["read"], "read:statuses")).toBe(true);
    expect(grants(["write"], "write:media")).toBe(true);
    expect(grants(["read"], "write:statuses")).toBe(false);
    expect(grants(["read:statuses"], "read:accounts")).toBe(false);
    expect(grants(["follow"], "write:follows")).toBe(true);
    expect(grants(["follow"], "write:statuses")).toBe(false);
    expect(grants(["admin:read"], "admin:read:accounts")).toBe(true);
    expect(grants(["write:statuses"], "write")).toBe(false);
  });

  test("requested scopes must fit the registered ones", () => {
    expect(isSubset(["read", "write"], ["read", "write", "follow"])).toBe(true);
    expect(isSubset(["read:statuses"], ["read"])).toBe(true);
    expect(isSubset(["read"], ["read:statuses"])).toBe(false);
    expect(isSubset(["push"], ["read", "write"])).toBe(false);
  });

  test("parsing and unknown scopes", () => {
    expect(parseScopes("read  write read")).toEqual(["read", "write"]);
    expect(parseScopes("read+write")).toEqual(["read", "write"]);
    expect(unknownScopes(["read", "hoge", "crypto"])).toEqual(["hoge", "crypto"]);
    expect(ALL_SCOPES).toContain("profile");
    expect(ALL_SCOPES).toContain("admin:write:canonical_email_blocks");
  });
});
