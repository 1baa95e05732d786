import { describe, expect, test } from "bun:test";
import { bool, file, humanize, int, InvalidParam, limitParam, obj, OFFSET, paramsFromEntries, paramsFromJson, paramsFromQuery, SECONDS, str, strArray } from "../../src/http/params.ts";

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
    expect(bool("true", "x")).toBe(true);
    expect(bool("1", "x")).toBe(true);
    expect(bool("on", "x")).toBe(true);
    expect(bool("false", "x")).toBe(false);
    expect(bool("0", "x")).toBe(false);
    expect(bool("", "x")).toBeUndefined();
    expect(bool(true, "x")).toBe(true);
    expect(int("300", "x", OFFSET)).toBe(300);
    expect(int("abc", "x", OFFSET)).toBeUndefined();
    expect(strArray({ "0": "a", "1": "b" }, "x")).toEqual(["a", "b"]);
    expect(strArray("x", "x")).toEqual(["x"]);
  });

  test("integers are truncated as to_i truncates them, and clamped into their range", () => {
    const range = { min: -10, max: 10 };
    expect(int("7.9", "x", range)).toBe(7);
    expect(int("-7.9", "x", range)).toBe(-7);
    expect(int(" +3 ", "x", range)).toBe(3);
    expect(int("99999999999999999999", "x", range)).toBe(10);
    expect(int("-99999999999999999999", "x", range)).toBe(-10);
    expect(int(1e300, "x", range)).toBe(10);
    expect(int(Infinity, "x", range)).toBe(10);
    expect(int(-Infinity, "x", range)).toBe(-10);
    expect(int(NaN, "x", range)).toBeUndefined();
    expect(int("-0", "x", range)).toBe(0);
    expect(Object.is(int("-0.5", "x", range), 0)).toBe(true);
    for (const text of ["1e5", "0x10", "", " ", "1,000", "١٢", "Infinity", "NaN"]) expect(int(text, "x", range)).toBeUndefined();
    expect(int("99999999999999999999", "offset", OFFSET)).toBe(OFFSET.max);
    expect(int("-5", "offset", OFFSET)).toBe(0);
    expect(Number.isSafeInteger(OFFSET.max) && Number.isFinite(new Date(Date.now() + SECONDS.max * 1000).getTime())).toBe(true);
  });

  test("limit_param: the default when absent, else the absolute value (to_i of text that is no number is 0), capped", () => {
    expect(limitParam(undefined, 20)).toBe(20);
    expect(limitParam("5", 20)).toBe(5);
    expect(limitParam("-5", 20)).toBe(5);
    expect(limitParam("99999999999999999999", 20)).toBe(40);
    expect(limitParam("-99999999999999999999", 20)).toBe(40);
    expect(limitParam("abc", 20)).toBe(0);
    expect(limitParam("2.5", 20, 30)).toBe(2);
    expect(limitParam(1e300, 20, 30)).toBe(30);
  });

  test("a value of the wrong shape is refused with the parameter's name, never dropped", () => {
    const refusal = (read: () => unknown) => {
      try {
        read();
      } catch (e) {
        return e instanceof InvalidParam ? { status: e.status, error: e.message, read: e.forRead().body } : e;
      }
      return "accepted";
    };
    expect(refusal(() => str(["x"], "scheduled_at"))).toEqual({ status: 422, error: "Validation failed: Scheduled at is invalid", read: { error: "Scheduled at is invalid" } });
    expect(refusal(() => str({ a: "x" }, "scheduled_at"))).toMatchObject({ error: "Validation failed: Scheduled at is invalid" });
    expect(refusal(() => str(new File(["x"], "x.txt"), "status"))).toMatchObject({ error: "Validation failed: Status is invalid" });
    expect(refusal(() => bool(["1"], "sensitive"))).toMatchObject({ error: "Validation failed: Sensitive is invalid" });
    expect(refusal(() => int({}, "poll[expires_in]", SECONDS))).toMatchObject({ error: "Validation failed: Poll expires in is invalid" });
    expect(refusal(() => int(true, "limit", OFFSET))).toMatchObject({ error: "Validation failed: Limit is invalid" });
    expect(refusal(() => strArray([{ a: "x" }], "media_ids"))).toMatchObject({ error: "Validation failed: Media ids is invalid" });
    expect(refusal(() => strArray({ "0": ["x"] }, "media_ids"))).toMatchObject({ error: "Validation failed: Media ids is invalid" });
    expect(refusal(() => obj("x", "poll"))).toMatchObject({ error: "Validation failed: Poll is invalid" });
    expect(refusal(() => obj(["x"], "source"))).toMatchObject({ error: "Validation failed: Source is invalid" });
    expect(refusal(() => file("x", "avatar"))).toMatchObject({ error: "Validation failed: Avatar is invalid" });
    expect(refusal(() => file({ a: "x" }, "avatar"))).toMatchObject({ error: "Validation failed: Avatar is invalid" });
    expect(file("", "avatar")).toBeUndefined();
    expect(str(null, "x")).toBeUndefined();
    expect(str(3, "x")).toBe("3");
    expect(humanize("fields_attributes[0][name]")).toBe("Fields attributes name");
    expect(refusal(() => paramsFromJson({ "media_ids[]": ["1", { a: "x" }] }))).toMatchObject({ status: 422, error: "Validation failed: Media ids is invalid" });
  });
});
