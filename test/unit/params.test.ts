import { describe, expect, test } from "bun:test";
import { bool, int, paramsFromEntries, paramsFromJson, paramsFromQuery, strArray } from "../../src/http/params.ts";

describe("Rails-style parameters", () => {
  test("nest arrays, hashes and arrays of hashes", () => {
    const p = paramsFromEntries([
      ["status", "hi"],
      ["media_ids[]", "1"],
      ["media_ids[]", "2"],
      ["poll[options][]", "a"],
      ["poll[options][]", "b"],
      ["poll[expires_in]", "300"],
      ["fields_attributes[0][name]", "n0"],
      ["fields_attributes[0][value]", "v0"],
      ["fields_attributes[1][name]", "n1"],
      ["list[][k]", "1"],
      ["list[][v]", "2"],
      ["list[][k]", "3"],
    ]);
    expect(p).toEqual({
      status: "hi",
      media_ids: ["1", "2"],
      poll: { options: ["a", "b"], expires_in: "300" },
      fields_attributes: { "0": { name: "n0", value: "v0" }, "1": { name: "n1" } },
      list: [{ k: "1", v: "2" }, { k: "3" }],
    });
  });

  test("a single [] value is still an array", () => {
    expect(paramsFromEntries([["id[]", "5"]])).toEqual({ id: ["5"] });
  });

  test("malformed brackets stay flat and conflicting shapes do not throw", () => {
    expect(paramsFromEntries([["a[b", "1"]])).toEqual({ "a[b": "1" });
    expect(() => paramsFromEntries([["a[]", "1"], ["a[x]", "2"], ["a", "3"]])).not.toThrow();
  });

  test("query strings and JSON bodies with bracket keys", () => {
    expect(paramsFromQuery("http://x/y?id[]=1&id[]=2&limit=3")).toEqual({ id: ["1", "2"], limit: "3" });
    expect(paramsFromJson({ "media_ids[]": ["1", 2], status: "x", poll: { options: ["a"] } })).toEqual({
      media_ids: ["1", "2"],
      status: "x",
      poll: { options: ["a"] },
    });
  });

  test("coercion follows Rails", () => {
    expect(bool("true")).toBe(true);
    expect(bool("1")).toBe(true);
    expect(bool("on")).toBe(true);
    expect(bool("false")).toBe(false);
    expect(bool("0")).toBe(false);
    expect(bool("")).toBeUndefined();
    expect(bool(true)).toBe(true);
    expect(int("300")).toBe(300);
    expect(int("abc")).toBeUndefined();
    expect(strArray({ "0": "a", "1": "b" })).toEqual(["a", "b"]);
    expect(strArray("x")).toEqual(["x"]);
  });
});
