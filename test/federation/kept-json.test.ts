import { expect, test } from "bun:test";
import { Create, Note, Object as ASObject } from "@fedify/vocab";

/**
 * The patch of @fedify/vocab that copies the JSON an object keeps (its `toJsonLd()` answer,
 * what signatures and forwarding rely on) by a walk over plain JSON instead of structuredClone
 * (patches/README.md, issue 30): the copy must be what structuredClone gave.
 */

const context = ["https://www.w3.org/ns/activitystreams", { toot: "http://joinmastodon.org/ns#", sensitive: "as:sensitive" }];

function create(): Record<string, any> {
  return {
    "@context": context,
    id: "https://peer.example/notes/1/activity",
    type: "Create",
    actor: "https://peer.example/users/carol",
    to: ["https://www.w3.org/ns/activitystreams#Public"],
    object: {
      id: "https://peer.example/notes/1",
      type: "Note",
      attributedTo: "https://peer.example/users/carol",
      content: "<p>hello</p>",
      sensitive: false,
      tag: [],
    },
  };
}

test("the kept JSON equals what was parsed and does not follow later changes to it", async () => {
  const json = create();
  const parsed = await Create.fromJsonLd(json);
  const kept = (await parsed.toJsonLd()) as Record<string, any>;
  expect(kept).toEqual(structuredClone(create()));
  expect(kept).not.toBe(json);
  json.object.content = "<p>changed</p>";
  json.to.push("https://peer.example/users/carol/followers");
  expect(((await parsed.toJsonLd()) as Record<string, any>).object.content).toBe("<p>hello</p>");
  expect(((await parsed.toJsonLd()) as Record<string, any>).to).toEqual(["https://www.w3.org/ns/activitystreams#Public"]);
  const note = await parsed.getObject();
  expect(note).toBeInstanceOf(Note);
  expect(note?.content?.toString()).toBe("<p>hello</p>");
});

test("a key named __proto__ stays a key, as structuredClone keeps it, and sets no prototype", async () => {
  // As a request body would bring it: JSON.parse makes "__proto__" an own key.
  const json = JSON.parse(JSON.stringify(create()).replace('"tag":[]', '"tag":[],"__proto__":{"polluted":true}'));
  expect(Object.keys(json.object)).toContain("__proto__");
  const kept = (await (await Create.fromJsonLd(json)).toJsonLd()) as Record<string, any>;
  expect(Object.keys(kept.object)).toContain("__proto__");
  expect(Object.getPrototypeOf(kept.object)).toBe(Object.prototype);
  expect(kept.object.polluted).toBeUndefined();
  expect(Object.getOwnPropertyDescriptor(kept.object, "__proto__")?.value).toEqual({ polluted: true });
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

test("values that are not plain JSON are copied by structuredClone, as before", async () => {
  const published = new Date("2026-11-26T00:00:00Z");
  const json = { "@context": "https://www.w3.org/ns/activitystreams", id: "https://peer.example/notes/2", type: "Note", content: "hi", extra: { when: published } };
  const kept = (await (await ASObject.fromJsonLd(json)).toJsonLd()) as Record<string, any>;
  expect(kept.extra.when).toBeInstanceOf(Date);
  expect(kept.extra.when).not.toBe(published);
  expect(kept.extra.when.getTime()).toBe(published.getTime());
  // Deeper than the walk goes: copied whole by structuredClone, equal.
  let deep: Record<string, unknown> = { leaf: "x" };
  for (let i = 0; i < 100; i++) deep = { next: deep };
  const deepJson = { "@context": "https://www.w3.org/ns/activitystreams", id: "https://peer.example/notes/3", type: "Note", extra: deep };
  expect(await (await ASObject.fromJsonLd(deepJson)).toJsonLd()).toEqual(structuredClone(deepJson));
});
