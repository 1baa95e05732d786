import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "../../src/media-files/sharp.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { getAp } from "../support/federation.ts";
import { mediaFiles } from "../support/files.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;
let http: Client;

const image = (format: "png" | "gif" | "webp" | "jpeg", size = 64) =>
  sharp({ create: { width: size, height: size, channels: 4, background: { r: 200, g: 40, b: 90, alpha: 1 } } })
    [format]()
    .toBuffer()
    .then((b) => new Uint8Array(b));

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  http = new Client(server.base);
  const emojis = server.ctx.services.customEmojis;
  await emojis.add("blobcat", await image("png"), { category: "Blobs" });
  await emojis.add("party_parrot", await image("gif", 300));
  await emojis.add("wave", await image("webp"));
});
afterAll(() => server.close());

const emojiCount = async () => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM custom_emojis"))!.n;

describe("custom emojis", () => {
  test("GET /api/v1/custom_emojis lists them as CustomEmoji entities, category only when set; the images are served", async () => {
    const res = await http.get("/api/v1/custom_emojis");
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { shortcode: "blobcat", url: expect.stringMatching(/\/system\/custom_emojis\/\d{4}\/\d\d\/[\w-]+\.png$/), static_url: expect.stringMatching(/\.png$/), visible_in_picker: true, category: "Blobs" },
      { shortcode: "party_parrot", url: expect.stringMatching(/\.gif$/), static_url: expect.stringMatching(/\.png$/), visible_in_picker: true },
      { shortcode: "wave", url: expect.stringMatching(/\.webp$/), static_url: expect.stringMatching(/\.png$/), visible_in_picker: true },
    ]);
    const parrot = res.body[1];
    const original = await fetch(parrot.url);
    expect(original.status).toBe(200);
    expect((await sharp(Buffer.from(await original.arrayBuffer())).metadata()).format).toBe("gif");
    // The static image is a PNG shrunk to fit 200x200.
    const still = await sharp(Buffer.from(await (await fetch(parrot.static_url)).arrayBuffer())).metadata();
    expect([still.format, still.width, still.height]).toEqual(["png", 200, 200]);
  });

  test("a bad shortcode, a taken one, an image of another type or of 256 KB are refused; nothing is stored", async () => {
    const emojis = server.ctx.services.customEmojis;
    const [rows, files] = [await emojiCount(), mediaFiles(server).length];
    const png = await image("png");
    const big = new Uint8Array(256 * 1024);
    big.set(png);
    const cases: [string, Uint8Array, string][] = [
      ["a", png, "Validation failed: Shortcode is invalid"],
      ["with-dash", png, "Validation failed: Shortcode is invalid"],
      ["blobcat", png, "Validation failed: Shortcode has already been taken"],
      ["photo", await image("jpeg"), "Validation failed: Image content type is invalid"],
      ["text", new TextEncoder().encode("not an image"), "Validation failed: Image content type is invalid"],
      ["huge", big, "Validation failed: Image file size must be less than 256 KB"],
    ];
    for (const [code, bytes, message] of cases) await expect(emojis.add(code, bytes)).rejects.toThrow(message);
    expect([await emojiCount(), mediaFiles(server).length]).toEqual([rows, files]);
  });

  test("one shortcode added by several at once: stored once, the others refused as taken and their files removed", async () => {
    const emojis = server.ctx.services.customEmojis;
    const [rows, files] = [await emojiCount(), mediaFiles(server).length];
    const png = await image("png");
    const results = await Promise.allSettled(Array.from({ length: 4 }, () => emojis.add("twice", png)));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results.filter((r) => r.status === "rejected")) expect((r.reason as Error).message).toBe("Validation failed: Shortcode has already been taken");
    // Its image and its still, once.
    expect([Number(await emojiCount()), mediaFiles(server).length]).toEqual([Number(rows) + 1, files + 2]);
    await emojis.removeFiles(await emojis.remove("twice"));
  });

  test("local statuses carry the emojis they use, in their edits too, and their Notes as Emoji tags", async () => {
    const status = await postStatus(alice, { status: "hello :blobcat: and :nope: and not:wave:", spoiler_text: ":wave:" });
    const listed = (await http.get("/api/v1/custom_emojis")).body as { shortcode: string }[];
    const entity = (code: string) => {
      const { category: _category, ...rest } = listed.find((e) => e.shortcode === code) as Record<string, unknown>;
      return rest;
    };
    expect(status.emojis).toEqual([entity("wave"), entity("blobcat")]);
    expect((await alice.client.get(`/api/v1/statuses/${status.id}`)).body.emojis).toEqual(status.emojis);
    const edited = await alice.client.put(`/api/v1/statuses/${status.id}`, { json: { status: "now :party_parrot:" } });
    expect(edited.body.emojis).toEqual([entity("party_parrot")]);
    // Each version of the history shows the emojis it used.
    const history = (await alice.client.get(`/api/v1/statuses/${status.id}/history`)).body as { emojis: { shortcode: string }[] }[];
    expect(history.map((v) => v.emojis.map((e) => e.shortcode).sort())).toEqual([["blobcat", "wave"], ["party_parrot"]]);

    const note = await getAp(`${server.base}/users/alice/statuses/${status.id}`);
    expect(note.status).toBe(200);
    const tags = (Array.isArray(note.body.tag) ? note.body.tag : [note.body.tag]).filter((t: { type: string }) => t.type === "Emoji");
    expect(tags).toEqual([
      { id: `${server.base}/emojis/party_parrot`, type: "Emoji", name: ":party_parrot:", icon: { type: "Image", mediaType: "image/gif", url: entity("party_parrot").url } },
    ]);
    const emoji = await getAp(`${server.base}/emojis/party_parrot`);
    expect(emoji.status).toBe(200);
    expect(emoji.body).toMatchObject({ id: `${server.base}/emojis/party_parrot`, type: "Emoji", name: ":party_parrot:" });
    expect((await getAp(`${server.base}/emojis/unknown`)).status).toBe(404);
  });

  test("display names, bios and fields carry their emojis, in the account and its actor", async () => {
    const res = await alice.client.patch("/api/v1/accounts/update_credentials", {
      json: { display_name: "Alice :blobcat:", note: "I :wave:", fields_attributes: { "0": { name: "mood", value: ":party_parrot:" } } },
    });
    expect(res.status).toBe(200);
    expect(res.body.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(["blobcat", "wave", "party_parrot"]);
    expect((await http.get(`/api/v1/accounts/${alice.id}`)).body.emojis).toEqual(res.body.emojis);
    const actor = await getAp(`${server.base}/users/alice`);
    expect(actor.body.tag.map((t: { name: string }) => t.name)).toEqual([":blobcat:", ":wave:", ":party_parrot:"]);
    const cleared = await alice.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Alice", note: "", fields_attributes: { "0": { name: "", value: "" } } } });
    expect(cleared.body.emojis).toEqual([]);
  });

  test("a removed emoji leaves the list and its files", async () => {
    const emojis = server.ctx.services.customEmojis;
    const row = await emojis.add("gone_soon", await image("png"));
    const files = mediaFiles(server).length;
    await emojis.removeFiles(await emojis.remove("gone_soon"));
    expect(mediaFiles(server).length).toBe(files - 2);
    expect((await http.get("/api/v1/custom_emojis")).body.map((e: { shortcode: string }) => e.shortcode)).not.toContain(row.shortcode);
    await expect(emojis.remove("gone_soon")).rejects.toThrow("Record not found");
  });
});
