/** An image with a description, posted on each side, shows (and loads) on the other, with the sender's blurhash. */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { mediaTools } from "../../../src/media-files/ffmpeg.ts";
import { G2R, R2G } from "../report.ts";
import { waitFor, type ApiClient } from "../support.ts";
import { expectStatus, inHome, post, type Session } from "./session.ts";

/** A small PNG made here (sharp is a dependency of Rookery anyway). */
async function image(color: string): Promise<Blob> {
  const png = await sharp({ create: { width: 96, height: 64, channels: 3, background: color } }).png().toBuffer();
  return new Blob([new Uint8Array(png)], { type: "image/png" });
}

async function upload(s: Session, client: ApiClient, color: string, description: string, file?: Blob): Promise<{ id: string; blurhash: string }> {
  const form = new FormData();
  form.append("file", file ?? (await image(color)), file ? "interop.mp4" : "interop.png");
  form.append("description", description);
  const media = expectStatus(await client.post("/api/v2/media", { multipart: form }), [200, 202], "upload");
  const processed = await waitFor(
    "the upload to be processed",
    async (seen) => {
      const m = await client.get(`/api/v1/media/${media.id}`);
      seen.last = `media: HTTP ${m.status} url ${m.body?.url}`;
      return m.status === 200 && m.body.url ? m.body : null;
    },
    s.timeout,
  );
  return { id: media.id as string, blurhash: processed.blurhash as string };
}

/**
 * The first attachment of a status as GoToSocial shows it once it has its own copy: it fetches
 * remote media in the background, and shows the type `unknown` until then.
 */
function gtsCopy(s: Session, statusId: string, what: string) {
  return waitFor(
    `GoToSocial's copy of ${what}`,
    async (last) => {
      const r = await s.bob.get(`/api/v1/statuses/${statusId}`);
      const a = r.body?.media_attachments?.[0];
      last.last = `attachments ${r.body?.media_attachments?.length}, type ${a?.type}, url ${a?.url}`;
      return a && a.type !== "unknown" ? a : null;
    },
    s.timeout,
  );
}

/**
 * What the other side shows of the attachment; `loader` trusts the test certificate. `blurhash`,
 * the sender's own: both sides keep the one sent (toot:blurhash) rather than compute theirs.
 */
async function seen(loader: ApiClient, attachment: any, description: string, blurhash: string) {
  if (!attachment) throw new Error("no attachment on the copy");
  if (attachment.type !== "image") throw new Error(`attachment type ${attachment.type}`);
  if (attachment.description !== description) throw new Error(`description "${attachment.description}"`);
  const loaded = await loader.bytes(attachment.url);
  if (loaded.status !== 200 || !loaded.type.startsWith("image/")) throw new Error(`its url ${attachment.url} answered ${loaded.status} ${loaded.type}`);
  const size = attachment.meta?.original?.width ? `${attachment.meta.original.width}x${attachment.meta.original.height}` : "no size in meta";
  if (attachment.blurhash !== blurhash) throw new Error(`blurhash ${attachment.blurhash}, the sender's ${blurhash}`);
  return `image at ${new URL(attachment.url).host} (${loaded.type}, ${loaded.size} bytes), ${size}, description and the sender's blurhash kept`;
}

export async function media(s: Session) {
  await s.report.check("media (image with description)", R2G, async () => {
    const description = "A red rectangle from Rookery";
    const uploaded = await upload(s, s.alice, "#c03020", description);
    const p = await post(s.alice, { status: "An image from Rookery", media_ids: [uploaded.id] });
    const there = await inHome(s, s.bob, p.uri, "alice's image post in bob's home timeline");
    const attachment = await gtsCopy(s, there.id, "the image");
    return `GoToSocial: ${await seen(s.bob, attachment, description, uploaded.blurhash)}`;
  });
  await s.report.check("media (image with description)", G2R, async () => {
    const description = "A blue rectangle from GoToSocial";
    const uploaded = await upload(s, s.bob, "#2040c0", description);
    const p = await post(s.bob, { status: "An image from GoToSocial", media_ids: [uploaded.id] });
    const here = await inHome(s, s.alice, p.uri, "bob's image post in alice's home timeline");
    if (!s.cacheRemoteMedia) {
      // Rookery shows remote media at the peer's URL (loaded here trusting the test certificate).
      return `Rookery: ${await seen(s.bob, here.media_attachments?.[0], description, uploaded.blurhash)}`;
    }
    // CACHE_REMOTE_MEDIA: Rookery copies the image and shows its copy, remote_url naming the origin.
    const rookeryHost = s.aliceAcct.split("@")[1]!;
    const attachment = await waitFor(
      "Rookery's copy of the image (CACHE_REMOTE_MEDIA)",
      async (last) => {
        const r = await s.alice.get(`/api/v1/statuses/${here.id}`);
        const a = r.body?.media_attachments?.[0];
        last.last = `attachments ${r.body?.media_attachments?.length}, url ${a?.url}, remote_url ${a?.remote_url}`;
        return a && new URL(a.url).host === rookeryHost ? a : null;
      },
      s.timeout,
    );
    const origin = attachment.remote_url ? new URL(attachment.remote_url).host : null;
    if (origin !== s.bobAcct.split("@")[1]) throw new Error(`remote_url ${attachment.remote_url}`);
    return `Rookery (CACHE_REMOTE_MEDIA) shows its copy: ${await seen(s.bob, attachment, description, uploaded.blurhash)}, remote_url at ${origin}`;
  });
}

/** A two-second H.264 + AAC clip made by the bundled ffmpeg from its test sources. */
async function clip(): Promise<Blob> {
  const tools = await mediaTools(tmpdir());
  if (!tools) throw new Error("no ffmpeg here to make a clip");
  const out = join(tmpdir(), `interop-${process.pid}.mp4`);
  const made = Bun.spawnSync([tools.ffmpeg, "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=2", "-f", "lavfi", "-i", "sine=duration=2", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "-movflags", "+faststart", out]);
  if (made.exitCode !== 0) throw new Error(`ffmpeg: ${made.stderr.toString()}`);
  const bytes = new Uint8Array(await Bun.file(out).arrayBuffer());
  rmSync(out, { force: true });
  return new Blob([bytes], { type: "video/mp4" });
}

/** A video posted on each side plays on the other (GoToSocial reads video with its own ffmpeg). */
export async function video(s: Session) {
  const file = await clip();
  await s.report.check("media (video)", R2G, async () => {
    const { id } = await upload(s, s.alice, "", "A test card from Rookery", file);
    const p = await post(s.alice, { status: "A video from Rookery", media_ids: [id] });
    const there = await inHome(s, s.bob, p.uri, "alice's video post in bob's home timeline");
    const attachment = await gtsCopy(s, there.id, "the video");
    if (attachment.type !== "video") throw new Error(`attachment type ${attachment.type}`);
    const loaded = await s.bob.bytes(attachment.url);
    if (loaded.status !== 200 || loaded.type !== "video/mp4") throw new Error(`its url answered ${loaded.status} ${loaded.type}`);
    return `GoToSocial: video at ${new URL(attachment.url).host} (${loaded.size} bytes), ${attachment.meta?.original?.width}x${attachment.meta?.original?.height}, ${attachment.meta?.original?.duration} s`;
  });
  await s.report.check("media (video)", G2R, async () => {
    const { id } = await upload(s, s.bob, "", "A test card from GoToSocial", file);
    const p = await post(s.bob, { status: "A video from GoToSocial", media_ids: [id] });
    const here = await inHome(s, s.alice, p.uri, "bob's video post in alice's home timeline");
    const a = here.media_attachments?.[0];
    if (!a || a.type !== "video") throw new Error(`attachment ${a?.type}`);
    const loaded = await s.bob.bytes(a.url);
    if (loaded.status !== 200 || !loaded.type.startsWith("video/")) throw new Error(`its url ${a.url} answered ${loaded.status} ${loaded.type}`);
    return `Rookery shows a video at ${new URL(a.url).host} (${loaded.type}, ${loaded.size} bytes), description "${a.description}"`;
  });
}
