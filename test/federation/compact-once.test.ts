import { describe, expect, setSystemTime, test } from "bun:test";
import { Accept, type Activity, Announce, Block, Create, Delete, Emoji, EmojiReact, Flag, Follow, Image, Like, Move, Note, Person, PUBLIC_COLLECTION, Question, Tombstone, Undo, Update } from "@fedify/fedify/vocab";
import { createOf, fannedOutActivity, sentActivity, signedAndCompacted } from "../support/outgoing-create.ts";

// Context.sendActivity used to compact every activity twice: once for its proof, once more with
// the proof to send it. Patched (patches/README.md, "compacted once"), it sends the first
// compaction with the proof compacted alone and put where jsonld.js's key order puts it. What
// goes out must be exactly what the second compaction wrote, for every kind of activity Rookery
// sends: here each is compared with the same activity signed with the same key and time and
// compacted whole by Fedify, the public audience and a lone attachment written as sendActivity writes them.

const base = "https://rookery.example";
const actor = new URL(`${base}/users/author`);
const followers = new URL(`${base}/users/author/followers`);
const other = new URL("https://peer.example/users/bob");
const kinds: [string, () => Activity][] = [
  ["a Create of a Note with a hashtag and an image", () => createOf()],
  ["a Create of a sensitive Note with a content warning", () => new Create({ id: new URL(`${base}/c/2`), actor, tos: [PUBLIC_COLLECTION], ccs: [followers], object: new Note({ id: new URL(`${base}/n/2`), attribution: actor, content: "<p>x</p>", summary: "cw", sensitive: true, tos: [PUBLIC_COLLECTION], ccs: [followers] }) })],
  ["a Create of a Question", () => new Create({ id: new URL(`${base}/c/3`), actor, tos: [PUBLIC_COLLECTION], object: new Question({ id: new URL(`${base}/q/3`), attribution: actor, content: "?", tos: [PUBLIC_COLLECTION], inclusiveOptions: [new Note({ name: "a" }), new Note({ name: "b" })] }) })],
  ["a followers-only Create", () => new Create({ id: new URL(`${base}/c/4`), actor, tos: [followers], object: new Note({ id: new URL(`${base}/n/4`), attribution: actor, content: "<p>only</p>", tos: [followers] }) })],
  ["an Announce", () => new Announce({ id: new URL(`${base}/a/1`), actor, object: new URL("https://peer.example/notes/1"), tos: [PUBLIC_COLLECTION], ccs: [followers, other] })],
  ["an Update of the actor", () => new Update({ id: new URL(`${base}/u/1`), actor, tos: [PUBLIC_COLLECTION], object: new Person({ id: actor, name: "Author", preferredUsername: "author", icon: new Image({ url: new URL(`${base}/avatar.png`), mediaType: "image/png" }) }) })],
  ["a Delete with a Tombstone", () => new Delete({ id: new URL(`${base}/d/1`), actor, tos: [PUBLIC_COLLECTION], object: new Tombstone({ id: new URL(`${base}/n/1`) }) })],
  ["a Like", () => new Like({ id: new URL(`${base}/l/1`), actor, object: new URL("https://peer.example/notes/1") })],
  ["an Undo of a Like", () => new Undo({ id: new URL(`${base}/un/1`), actor, object: new Like({ id: new URL(`${base}/l/1`), actor, object: new URL("https://peer.example/notes/1") }) })],
  ["an Accept of a Follow", () => new Accept({ id: new URL(`${base}/ac/1`), actor, object: new Follow({ id: new URL("https://peer.example/follows/1"), actor: other, object: actor }) })],
  ["a Follow", () => new Follow({ id: new URL(`${base}/f/1`), actor, object: other })],
  ["a Block", () => new Block({ id: new URL(`${base}/b/1`), actor, object: other })],
  ["a Move", () => new Move({ id: new URL(`${base}/m/1`), actor, object: actor, target: new URL("https://peer.example/users/author") })],
  ["a Flag", () => new Flag({ id: new URL(`${base}/fl/1`), actor, objects: [other, new URL("https://peer.example/notes/2")], content: "spam" })],
  ["an EmojiReact", () => new EmojiReact({ id: new URL(`${base}/e/1`), actor, object: new URL("https://peer.example/notes/1"), content: ":x:", tags: [new Emoji({ id: new URL(`${base}/emoji/x`), name: ":x:", icon: new Image({ url: new URL(`${base}/x.png`) }) })] })],
];

describe("an activity compacted once for its proof and for sending", () => {
  for (const [name, make] of kinds) {
    test(`${name}: what sendActivity queues is the whole compaction with the proof, byte for byte`, async () => {
      setSystemTime(new Date("2026-11-26T12:00:00Z"));
      try {
        const sent = (await sentActivity(make())) as Record<string, unknown>;
        const { signature, ...withoutSignature } = sent;
        expect((signature as { type: string }).type).toBe("RsaSignature2017");
        const proof = sent.proof as { verificationMethod: string; "@context": unknown };
        expect(proof["@context"]).toEqual(sent["@context"]);
        const whole = await signedAndCompacted(make(), new URL(proof.verificationMethod));
        // sendActivity's two rewrites: the public audience written out, a lone attachment in an array.
        const audienceWritten = JSON.stringify(whole).replaceAll('"as:Public"', '"https://www.w3.org/ns/activitystreams#Public"');
        const expected = JSON.stringify(JSON.parse(audienceWritten, (key, value) => (key === "attachment" && !Array.isArray(value) ? [value] : value)));
        expect(JSON.stringify(withoutSignature)).toBe(expected);
      } finally {
        setSystemTime();
      }
    });
  }

  test("to five servers or more, the fan-out message carries the same compaction (not yet normalized), byte for byte", async () => {
    setSystemTime(new Date("2026-11-26T12:00:00Z"));
    try {
      const fanned = (await fannedOutActivity(createOf())) as { proof: { verificationMethod: string } };
      const whole = await signedAndCompacted(createOf(), new URL(fanned.proof.verificationMethod));
      expect(JSON.stringify(fanned)).toBe(JSON.stringify(whole));
    } finally {
      setSystemTime();
    }
  });
});
