import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { clips, decodes, probeBytes, removeClips } from "../support/clips.ts";
import { mediaFiles, processedAfterHold, mediaRows } from "../support/files.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { drain } from "../support/wait.ts";

// Video, gifv and audio uploads, made from clips ffmpeg generates (test/support/clips.ts),
// checked by probing and decoding what the server then serves.

let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
});
afterAll(() => {
  server.close();
  removeClips();
});

function upload(bytes: Uint8Array, options: { version?: 1 | 2; fields?: Record<string, string | Blob> } = {}) {
  const form = new FormData();
  // The name and type say nothing true: the server reads the bytes.
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }), "upload.bin");
  for (const [k, v] of Object.entries(options.fields ?? {})) form.append(k, v);
  return alice.client.post(`/api/v${options.version ?? 1}/media`, { multipart: form });
}

async function served(url: string, type: string): Promise<Uint8Array> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe(type);
  return new Uint8Array(await res.arrayBuffer());
}

async function previewOf(url: string) {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return sharp(Buffer.from(await res.arrayBuffer())).metadata();
}

const rows = () => mediaRows(server);
const BLURHASH = /^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{36}$/;

describe("video", () => {
  test("a web-safe MP4 is kept as it is, its metadata dropped, with a first-frame preview", async () => {
    const res = await upload(await clips.mp4(), { fields: { description: "A test card", focus: "0.5,-0.5" } });
    expect(res.status).toBe(200);
    const m = res.body;
    expect(m.meta.focus).toEqual({ x: 0.5, y: -0.5 });
    expect(m.type).toBe("video");
    expect(m.url).toMatch(/\.mp4$/);
    expect(m.description).toBe("A test card");
    expect(m.blurhash).toMatch(BLURHASH);
    expect(m.meta.original).toEqual({ width: 320, height: 240, frame_rate: "30/1", duration: expect.any(Number), bitrate: expect.any(Number) });
    expect(m.meta.original.duration).toBeCloseTo(2, 0);
    expect(m.meta.small).toEqual({ width: 320, height: 240, size: "320x240", aspect: 320 / 240 });
    expect(m.meta).toMatchObject({ fps: 30, width: 320, height: 240, size: "320x240", audio_encode: "aac", audio_bitrate: "44100 Hz", audio_channels: "mono" });
    expect(m.meta.length).toMatch(/^0:00:0[12]\.\d\d$/);
    const file = await served(m.url, "video/mp4");
    const probe = await probeBytes(file);
    expect(probe.streams.map((s) => s.codec_name)).toEqual(["h264", "aac"]);
    expect(probe.format.tags?.title).toBeUndefined();
    expect(await decodes(file)).toBe(true);
    const preview = await previewOf(m.preview_url);
    expect(preview.format).toBe("png");
    expect([preview.width, preview.height]).toEqual([320, 240]);
  });

  test("a MOV from a phone becomes H.264/AAC MP4 without the place it was filmed", async () => {
    const mov = await clips.mov();
    expect((await probeBytes(mov)).format.tags?.location).toBe("+48.8584+002.2945/");
    const res = await upload(mov);
    expect(res.status).toBe(200);
    expect(res.body.type).toBe("video");
    expect(res.body.meta.original).toMatchObject({ width: 240, height: 320, frame_rate: "30/1" });
    const file = await served(res.body.url, "video/mp4");
    const probe = await probeBytes(file);
    expect(probe.format.format_name).toContain("mp4");
    expect(probe.format.tags?.location).toBeUndefined();
    expect(probe.format.tags?.make).toBeUndefined();
    expect(probe.streams.map((s) => [s.codec_name, s.pix_fmt ?? null])).toEqual([
      ["h264", "yuv420p"],
      ["aac", null],
    ]);
    expect(await decodes(file)).toBe(true);
  });

  test("WebM (VP9 + Opus) and H.265 MP4 are transcoded to H.264 + AAC", async () => {
    for (const bytes of [await clips.webm(), await clips.hevc()]) {
      const res = await upload(bytes);
      expect(res.status).toBe(200);
      expect(res.body.type).toBe("video");
      const probe = await probeBytes(await served(res.body.url, "video/mp4"));
      expect(probe.streams.map((s) => s.codec_name)).toEqual(["h264", "aac"]);
      expect(res.body.meta.original).toMatchObject({ width: 320, height: 240 });
    }
  });

  test("a video turned by its display matrix is made upright", async () => {
    const res = await upload(await clips.rotated());
    expect(res.status).toBe(200);
    expect(res.body.meta.original).toMatchObject({ width: 240, height: 320 });
    const probe = await probeBytes(await served(res.body.url, "video/mp4"));
    const video = probe.streams.find((s) => s.codec_type === "video");
    expect([video?.width, video?.height]).toEqual([240, 320]);
    const preview = await previewOf(res.body.preview_url);
    expect([preview.width, preview.height]).toEqual([240, 320]);
  });

  test("a video with no sound is a gifv, as Mastodon types it", async () => {
    const res = await upload(await clips.silent());
    expect(res.status).toBe(200);
    expect(res.body.type).toBe("gifv");
    expect(res.body.meta.audio_encode).toBeUndefined();
    const probe = await probeBytes(await served(res.body.url, "video/mp4"));
    expect(probe.streams.map((s) => s.codec_type)).toEqual(["video"]);
  });
});

describe("every container and codec Mastodon takes", () => {
  test("AV1 (MP4, WebM) and VP8 become H.264 video; FLAC, WAV, M4A, WebM and Vorbis audio become MP3", async () => {
    const cases = [
      [clips.av1Mp4, "video", ["h264", "aac"]],
      [clips.av1Webm, "video", ["h264", "aac"]],
      [clips.vp8, "video", ["h264", "aac"]],
      [clips.flac, "audio", ["mp3"]],
      [clips.wav, "audio", ["mp3"]],
      [clips.m4a, "audio", ["mp3"]],
      [clips.webmAudio, "audio", ["mp3"]],
      [clips.vorbis, "audio", ["mp3"]],
    ] as const;
    for (const [make, type, codecs] of cases) {
      const res = await upload(await make());
      expect([res.status, res.body.type]).toEqual([200, type]);
      const file = await served(res.body.url, type === "video" ? "video/mp4" : "audio/mpeg");
      expect((await probeBytes(file)).streams.map((s) => s.codec_name)).toEqual([...codecs]);
      expect(await decodes(file)).toBe(true);
    }
  });
});

describe("gifv", () => {
  test("an animated GIF and an animated PNG become silent looping MP4s", async () => {
    for (const bytes of [await clips.gif(), await clips.apng()]) {
      const res = await upload(bytes);
      expect(res.status).toBe(200);
      expect(res.body.type).toBe("gifv");
      expect(res.body.meta.original).toMatchObject({ width: 160, height: 120 });
      expect(res.body.blurhash).toMatch(BLURHASH);
      const file = await served(res.body.url, "video/mp4");
      const probe = await probeBytes(file);
      expect(probe.streams.map((s) => [s.codec_type, s.codec_name, s.pix_fmt])).toEqual([["video", "h264", "yuv420p"]]);
      expect(await decodes(file)).toBe(true);
    }
  });

  test("an animated WebP becomes a gifv, its frames read by sharp", async () => {
    const frames = await Promise.all(
      ["#ff0000", "#00ff00", "#0000ff"].map((c) => sharp({ create: { width: 64, height: 48, channels: 3, background: c } }).raw().toBuffer()),
    );
    const webp = await sharp(Buffer.concat(frames), { raw: { width: 64, height: 48 * 3, channels: 3, pageHeight: 48 } } as never)
      .webp({ loop: 0, delay: [100, 200, 100] })
      .toBuffer();
    expect((await sharp(webp).metadata()).pages).toBe(3);
    const res = await upload(new Uint8Array(webp));
    expect(res.status).toBe(200);
    expect(res.body.type).toBe("gifv");
    expect(res.body.meta.original).toMatchObject({ width: 64, height: 48 });
    expect(res.body.meta.original.duration).toBeCloseTo(0.4, 1);
    expect(await decodes(await served(res.body.url, "video/mp4"))).toBe(true);
  });

  test("a still GIF stays an image", async () => {
    const gif = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#123456" } }).gif().toBuffer();
    const res = await upload(new Uint8Array(gif));
    expect(res.status).toBe(200);
    expect(res.body.type).toBe("image");
  });
});

describe("audio", () => {
  test("an MP3 is kept as MP3, its tags dropped, its cover art the preview", async () => {
    const res = await upload(await clips.mp3());
    expect(res.status).toBe(200);
    const m = res.body;
    expect(m.type).toBe("audio");
    expect(m.url).toMatch(/\.mp3$/);
    expect(m.meta).toMatchObject({ audio_encode: "mp3", audio_bitrate: "44100 Hz", audio_channels: "mono" });
    expect(m.meta.original).toEqual({ duration: expect.any(Number), bitrate: expect.any(Number) });
    expect(m.meta.original.duration).toBeCloseTo(2, 0);
    expect(m.meta.small).toMatchObject({ width: 300, height: 300 });
    expect(m.blurhash).toMatch(BLURHASH);
    const file = await served(m.url, "audio/mpeg");
    const probe = await probeBytes(file);
    expect(probe.streams.map((s) => s.codec_name)).toEqual(["mp3"]);
    expect(probe.format.tags?.title).toBeUndefined();
    expect(await decodes(file)).toBe(true);
    expect((await previewOf(m.preview_url)).format).toBe("png");
  });

  test("an Opus voice note becomes MP3, with no preview", async () => {
    const res = await upload(await clips.opus());
    expect(res.status).toBe(200);
    expect(res.body.type).toBe("audio");
    expect(res.body.preview_url).toBeNull();
    expect(res.body.blurhash).toBeNull();
    expect(res.body.meta.audio_encode).toBe("mp3");
    const file = await served(res.body.url, "audio/mpeg");
    expect((await probeBytes(file)).streams.map((s) => s.codec_name)).toEqual(["mp3"]);
    expect(await decodes(file)).toBe(true);
  });
});

describe("v2: processed on the queue", () => {
  test("202 with the preview; 206 while processing; then 200 with the original", async () => {
    const hold = server.ctx.services.media.queue.hold("rendered");
    const res = await upload(await clips.webm(), { version: 2 });
    expect(res.status).toBe(202);
    expect(res.body.type).toBe("video");
    expect(res.body.url).toBeNull();
    expect(res.body.preview_url).not.toBeNull();
    expect(res.body.meta.small).toMatchObject({ width: 320, height: 240 });
    expect(res.body.meta.original).toBeUndefined();
    const after = await processedAfterHold(server, alice.client, res.body.id, hold);
    expect(after.body.meta.original).toMatchObject({ width: 320, height: 240, frame_rate: "30/1" });
    expect(after.body.meta.small).toMatchObject({ width: 320, height: 240 });
    expect(await decodes(await served(after.body.url, "video/mp4"))).toBe(true);
    expect(mediaFiles(server).some((f) => f.includes("media_uploads"))).toBe(false);
  });
});

describe("refused and failed", () => {
  test("a truncated video: 422 on v1, nothing kept", async () => {
    const whole = await clips.mp4IndexLast();
    const before = { rows: await rows(), files: mediaFiles(server).length };
    const res = await upload(whole.slice(0, Math.floor(whole.length / 2)));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Error processing thumbnail for uploaded media" });
    expect(await rows()).toBe(before.rows);
    expect(mediaFiles(server).length).toBe(before.files);
  });

  test("a truncated video on v2: 202, then failed processing (422 on GET), never a stuck 206", async () => {
    const whole = await clips.mp4IndexLast();
    const res = await upload(whole.slice(0, Math.floor(whole.length / 2)), { version: 2 });
    expect(res.status).toBe(202);
    expect(res.body.type).toBe("video");
    await server.ctx.services.media.queue.idle();
    const after = await alice.client.get(`/api/v1/media/${res.body.id}`);
    expect(after.status).toBe(422);
    expect(after.body).toEqual({ error: "Error processing thumbnail for uploaded media" });
    expect(mediaFiles(server).some((f) => f.includes("media_uploads"))).toBe(false);
  });

  test("a second, larger video track is never what gets served: only the checked streams are read", async () => {
    const res = await upload(await clips.twoTracks());
    expect(res.status).toBe(200);
    expect(res.body.meta.original).toMatchObject({ width: 320, height: 240 });
    const probe = await probeBytes(await served(res.body.url, "video/mp4"));
    expect(probe.streams.map((s) => [s.codec_type, s.width ?? null, s.height ?? null])).toEqual([
      ["video", 320, 240],
      ["audio", null, null],
    ]);
  });

  test("a codec outside the list uploads may use (QuickTime Animation) is refused", async () => {
    const before = { rows: await rows(), files: mediaFiles(server).length };
    const res = await upload(await clips.qtrle());
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Error processing thumbnail for uploaded media" });
    expect(await rows()).toBe(before.rows);
    expect(mediaFiles(server).length).toBe(before.files);
  });

  test("over 4K and over 120 fps: 422 with Mastodon's words, nothing kept", async () => {
    const before = { rows: await rows(), files: mediaFiles(server).length };
    for (const [bytes, error] of [
      [await clips.tooLarge(), "4096x2160 videos are not supported"],
      [await clips.tooFast(), "150fps videos are not supported"],
    ] as const) {
      for (const version of [1, 2] as const) {
        const res = await upload(bytes, { version });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ error });
      }
    }
    expect(await rows()).toBe(before.rows);
    expect(mediaFiles(server).length).toBe(before.files);
  });

  test("99 MB: 422 with Mastodon's words; past it 413 as it arrives; 17 MB of video is fine where an image would not be", async () => {
    const before = { rows: await rows(), files: mediaFiles(server).length };
    const head = await clips.mp4();
    const big = new Uint8Array(99 * 1024 * 1024 + 1);
    big.set(head);
    // Exactly the limit arrives whole, and is refused as Mastodon refuses it ("must be less than").
    const res = await upload(big.subarray(0, 99 * 1024 * 1024));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Validation failed: File must be less than 99 MB, File file size must be less than 99 MB" });
    // One byte more is past it: the body is refused where that byte arrives (test/media/uploads-streaming.test.ts).
    const over = await upload(big);
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ error: "Request body is too large" });
    expect(await rows()).toBe(before.rows);
    expect(mediaFiles(server).length).toBe(before.files);
    // An MP4 padded past the image limit with a free box, which players skip.
    const pad = 17 * 1024 * 1024;
    const padded = new Uint8Array(head.length + pad);
    padded.set(head);
    new DataView(padded.buffer).setUint32(head.length, pad);
    padded.set(new TextEncoder().encode("free"), head.length + 4);
    const ok = await upload(padded);
    expect(ok.status).toBe(200);
    expect(ok.body.type).toBe("video");
  });

  test("bytes that start like a video and are not one: 422, nothing kept", async () => {
    const before = { rows: await rows(), files: mediaFiles(server).length };
    const fake = new Uint8Array(4096).fill(0x41);
    fake.set([0, 0, 0, 0x18, ...new TextEncoder().encode("ftypisom")]);
    const res = await upload(fake);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Error processing thumbnail for uploaded media" });
    expect(await rows()).toBe(before.rows);
    expect(mediaFiles(server).length).toBe(before.files);
  });
});

describe("thumbnails and statuses", () => {
  test("a custom thumbnail stands in for the video's frame; PUT gives an audio file one", async () => {
    const thumb = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#aa3366" } }).jpeg().toBuffer();
    const video = await upload(await clips.mp4(), { fields: { thumbnail: new Blob([thumb]) } });
    expect(video.status).toBe(200);
    expect(video.body.meta.small.width * video.body.meta.small.height).toBeLessThanOrEqual(230_400);
    expect(video.body.meta.small.aspect).toBeCloseTo(800 / 600, 2);
    expect(video.body.meta.original).toMatchObject({ width: 320, height: 240 });
    expect((await previewOf(video.body.preview_url)).format).toBe("jpeg");

    const voice = await upload(await clips.opus());
    expect(voice.body.preview_url).toBeNull();
    const form = new FormData();
    form.append("thumbnail", new Blob([thumb]));
    form.append("description", "a hum");
    const put = await alice.client.put(`/api/v1/media/${voice.body.id}`, { multipart: form });
    expect(put.status).toBe(200);
    expect(put.body.type).toBe("audio");
    expect(put.body.description).toBe("a hum");
    expect(put.body.preview_url).not.toBeNull();
    expect(put.body.blurhash).toMatch(BLURHASH);
    // What the audio is stays described as it was.
    expect(put.body.meta).toMatchObject({ audio_encode: "mp3", original: voice.body.meta.original });
    expect(put.body.url).toBe(voice.body.url);
  });

  test("PUT with a new file takes it as POST /api/v1/media does: a video, a GIF made gifv, audio; a custom thumbnail stays; a bad one changes nothing", async () => {
    const put = (id: string, file: Uint8Array, fields: Record<string, string | Blob> = {}) => {
      const form = new FormData();
      form.append("file", new Blob([file as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }), "upload.bin");
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      return alice.client.put(`/api/v1/media/${id}`, { multipart: form });
    };
    const png = new Uint8Array(await sharp({ create: { width: 64, height: 48, channels: 3, background: "#336699" } }).png().toBuffer());
    const image = (await upload(png, { fields: { focus: "0.2,0.3" } })).body;
    expect(image.type).toBe("image");

    // An image becomes a video: its file, type, meta and first-frame preview are the video's; focus stays.
    const video = await put(image.id, await clips.mp4());
    expect(video.status).toBe(200);
    expect(video.body).toMatchObject({ id: image.id, type: "video", meta: { focus: { x: 0.2, y: 0.3 }, fps: 30, original: { width: 320, height: 240, frame_rate: "30/1" }, small: { width: 320, height: 240 } } });
    expect(video.body.url).toMatch(/\.mp4$/);
    expect(video.body.preview_url).not.toBe(image.preview_url);
    expect(video.body.blurhash).toMatch(BLURHASH);
    expect(await decodes(await served(video.body.url, "video/mp4"))).toBe(true);
    expect((await fetch(image.url)).status).toBe(404);
    expect((await previewOf(video.body.preview_url)).width).toBe(320);

    // The video becomes a gifv from a GIF; GET says the same.
    const gifv = await put(image.id, await clips.gif());
    expect(gifv.status).toBe(200);
    expect(gifv.body).toMatchObject({ type: "gifv", meta: { original: { width: 160, height: 120 }, small: { width: 160, height: 120 } } });
    expect(gifv.body.meta.audio_encode).toBeUndefined();
    expect((await fetch(video.body.url)).status).toBe(404);
    expect((await alice.client.get(`/api/v1/media/${image.id}`)).body).toEqual(gifv.body);

    // With a custom thumbnail, an Opus file replacing it becomes MP3 audio and keeps that thumbnail.
    const thumb = new Blob([await sharp({ create: { width: 80, height: 80, channels: 3, background: "#aa3366" } }).jpeg().toBuffer()]);
    const thumbnailForm = new FormData();
    thumbnailForm.append("thumbnail", thumb);
    const custom = await alice.client.put(`/api/v1/media/${image.id}`, { multipart: thumbnailForm });
    expect(custom.status).toBe(200);
    const audio = await put(image.id, await clips.opus());
    expect(audio.status).toBe(200);
    expect(audio.body).toMatchObject({ type: "audio", preview_url: custom.body.preview_url, blurhash: custom.body.blurhash, meta: { audio_encode: "mp3", small: custom.body.meta.small } });
    expect(audio.body.meta.original).toEqual({ duration: expect.any(Number), bitrate: expect.any(Number) });
    expect(audio.body.meta.fps).toBeUndefined();
    expect(await decodes(await served(audio.body.url, "audio/mpeg"))).toBe(true);

    // A truncated video and a video over 4K: 422, and the attachment and its files are as they were.
    const files = mediaFiles(server).sort();
    const whole = await clips.mp4IndexLast();
    const truncated = await put(image.id, whole.slice(0, Math.floor(whole.length / 2)));
    expect([truncated.status, truncated.body]).toEqual([422, { error: "Error processing thumbnail for uploaded media" }]);
    const large = await put(image.id, await clips.tooLarge());
    expect([large.status, large.body]).toEqual([422, { error: "4096x2160 videos are not supported" }]);
    expect((await alice.client.get(`/api/v1/media/${image.id}`)).body).toEqual(audio.body);
    expect(mediaFiles(server).sort()).toEqual(files);
  });

  test("posted: the status, its public page and its ActivityPub Note carry them", async () => {
    const cases = [
      [await clips.mp4(), "video", "video/mp4", "controls"],
      [await clips.gif(), "gifv", "video/mp4", "autoplay loop muted playsinline"],
      [await clips.mp3(), "audio", "audio/mpeg", "controls"],
    ] as const;
    for (const [bytes, type, mediaType, attributes] of cases) {
      const id = (await upload(bytes)).body.id;
      const status = await alice.client.post("/api/v1/statuses", { json: { status: `a ${type}`, media_ids: [id], visibility: "public" } });
      expect(status.status).toBe(200);
      const m = status.body.media_attachments[0];
      expect(m.type).toBe(type);
      const page = await (await fetch(`${server.base}/@alice/${status.body.id}`)).text();
      expect(page).toContain(`<${type === "audio" ? "audio" : "video"} src="${m.url}" ${attributes}`);
      const note = await (await fetch(status.body.uri, { headers: { accept: "application/activity+json" } })).json();
      // One attachment is compacted to an object, as JSON-LD does.
      expect([note.attachment].flat().map((a: { mediaType: string; url: string }) => [a.mediaType, a.url])).toEqual([[mediaType, m.url]]);
    }
  });

  test("a video or audio file goes alone and only once processed, as Mastodon's PostStatusService", async () => {
    const statuses = async () => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses"))!.n;
    const before = await statuses();
    const image = (await upload(new Uint8Array(await sharp({ create: { width: 20, height: 20, channels: 3, background: "#000" } }).png().toBuffer()))).body.id;
    const video = (await upload(await clips.mp4())).body.id;
    const mixed = await alice.client.post("/api/v1/statuses", { json: { status: "both", media_ids: [image, video] } });
    expect(mixed.status).toBe(422);
    expect(mixed.body).toEqual({ error: "Cannot attach a video to a post that already contains images" });
    // A gifv may go with images (Mastodon's audio_or_video? leaves it out).
    const gifv = (await upload(await clips.gif())).body.id;
    expect((await alice.client.post("/api/v1/statuses", { json: { status: "gif and image", media_ids: [gifv, image] } })).status).toBe(200);

    const hold = server.ctx.services.media.queue.hold("rendered");
    const pending = await upload(await clips.webm(), { version: 2 });
    await hold.reached;
    const early = await alice.client.post("/api/v1/statuses", { json: { status: "too soon", media_ids: [pending.body.id] } });
    expect(early.status).toBe(422);
    expect(early.body).toEqual({ error: "Cannot attach files that have not finished processing. Try again in a moment!" });
    hold.release();
    await server.ctx.services.media.queue.idle();
    expect((await alice.client.post("/api/v1/statuses", { json: { status: "now", media_ids: [pending.body.id] } })).status).toBe(200);

    const whole = await clips.mp4IndexLast();
    const failed = await upload(whole.slice(0, Math.floor(whole.length / 2)), { version: 2 });
    const refused = await alice.client.post("/api/v1/statuses", { json: { status: "broken", media_ids: [failed.body.id] } });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ error: "Cannot attach files that have not finished processing. Try again in a moment!" });
    expect(await statuses()).toBe(before + 2);
  });
});

describe("deletion", () => {
  test("DELETE and the unattached-media cleanup remove a video's files, as an image's", async () => {
    const thumb = await sharp({ create: { width: 60, height: 40, channels: 3, background: "#336699" } }).png().toBuffer();
    const before = mediaFiles(server).length;
    const a = await upload(await clips.mp4());
    const b = await upload(await clips.mp3(), { fields: { thumbnail: new Blob([thumb]) } });
    expect(mediaFiles(server).length).toBe(before + 4);
    expect((await alice.client.delete(`/api/v1/media/${a.body.id}`)).status).toBe(200);
    expect(mediaFiles(server).length).toBe(before + 2);
    expect((await fetch(a.body.url)).status).toBe(404);
    server.clock.advance(25 * 60 * 60 * 1000);
    await drain(server);
    // Every unattached upload so far is gone with its files; the audio's file and its custom thumbnail among them.
    expect((await alice.client.get(`/api/v1/media/${b.body.id}`)).status).toBe(404);
    expect((await fetch(b.body.url)).status).toBe(404);
    expect((await fetch(b.body.preview_url)).status).toBe(404);
    expect(mediaFiles(server).some((f) => f.includes("media_uploads"))).toBe(false);
  });
});

describe("serving", () => {
  test("video is served in byte ranges, as players ask for it", async () => {
    const res = await upload(await clips.mp4());
    const whole = await served(res.body.url, "video/mp4");
    const part = await fetch(res.body.url, { headers: { range: "bytes=100-199" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 100-199/${whole.length}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(whole.slice(100, 200));
    const tail = await fetch(res.body.url, { headers: { range: "bytes=-10" } });
    expect(tail.status).toBe(206);
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(whole.slice(-10));
    const past = await fetch(res.body.url, { headers: { range: `bytes=${whole.length}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${whole.length}`);
  });

  test("the instance documents advertise Mastodon's video limits and types", async () => {
    for (const path of ["/api/v1/instance", "/api/v2/instance"]) {
      const res = await alice.client.get(path);
      const media = res.body.configuration.media_attachments;
      expect(media).toMatchObject({ video_size_limit: 103809024, video_frame_rate_limit: 120, video_matrix_limit: 8294400 });
      expect(media.supported_mime_types).toEqual(expect.arrayContaining(["video/mp4", "video/quicktime", "video/webm", "audio/mpeg", "audio/ogg", "audio/flac", "audio/wav", "audio/mp4"]));
    }
  });
});
