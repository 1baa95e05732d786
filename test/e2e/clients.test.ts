/**
 * The whole API through the compiled executable, driven only by real clients (masto.js and
 * megalodon) and, for the OAuth pages, plain HTTP as a browser would send it. The
 * executable runs from a folder away from the project, on a fresh DATA_DIR.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createReadStream, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createOAuthAPIClient, createRestAPIClient, createStreamingAPIClient, type mastodon } from "masto";
import generator, { type Entity } from "megalodon";
import sharp from "sharp";
import { BrowserSession } from "../support/browser.ts";
import { clips, probeBytes } from "../support/clips.ts";
import { parseForms } from "../support/html.ts";
import { onPostgres } from "../support/test-database.ts";
import { eventually } from "../support/wait.ts";
import { buildExecutable, startExecutable, type RunningExecutable } from "./executable.ts";

const PASSWORD = "a long and secret passphrase";
let build: { file: string; cleanup(): void };
let exe: RunningExecutable;

beforeAll(async () => {
  build = buildExecutable();
  exe = await startExecutable(build.file, { REGISTRATIONS: "open" });
}, 180_000);

afterAll(async () => {
  await exe?.stop();
  build?.cleanup();
});

async function png(color: string) {
  return sharp({ create: { width: 320, height: 200, channels: 3, background: color } }).png().toBuffer();
}

/** Registration through the API as a client app does it, then a password-grant login. */
async function signUp(username: string) {
  const anonymous = createRestAPIClient({ url: exe.url });
  const app = await anonymous.v1.apps.create({ clientName: `e2e ${username}`, redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow push" });
  const oauth = createOAuthAPIClient({ url: exe.url });
  const appToken = await oauth.token.create({
    grantType: "client_credentials",
    clientId: app.clientId!,
    clientSecret: app.clientSecret!,
    scope: "read write follow push",
    redirectUri: "urn:ietf:wg:oauth:2.0:oob",
  });
  const registrar = createRestAPIClient({ url: exe.url, accessToken: appToken.accessToken });
  await registrar.v1.accounts.create({ username, email: `${username}@e2e.test`, password: PASSWORD, agreement: true, locale: "en" });
  const token = await oauth.token.create({
    grantType: "password",
    clientId: app.clientId!,
    clientSecret: app.clientSecret!,
    username: `${username}@e2e.test`,
    password: PASSWORD,
    scope: "read write follow push",
    redirectUri: "urn:ietf:wg:oauth:2.0:oob",
  });
  return { token: token.accessToken, client: createRestAPIClient({ url: exe.url, accessToken: token.accessToken }) };
}

/**
 * Every event of a masto.js subscription, collected by one iteration that stays subscribed
 * (ending an iteration unsubscribes, and a new one would race the requests that follow it).
 */
function collectEvents(subscription: mastodon.streaming.Subscription) {
  const events: mastodon.streaming.Event[] = [];
  void (async () => {
    for await (const event of subscription) events.push(event);
  })().catch(() => {});
  return events;
}

/**
 * masto.js connects after a one-second back-off and subscribes once connected, so what
 * happens before that goes unheard. Probes (each followed by a short wait for it to be
 * heard) until one is, rather than sleeping for a guessed time.
 */
async function untilHeard(probe: () => Promise<unknown>, heard: () => boolean) {
  const deadline = Date.now() + 20_000;
  while (!heard()) {
    if (Date.now() > deadline) throw new Error("the stream never heard a probe");
    await probe();
    await eventually(heard, "the probe to be heard", 300).catch(() => {});
  }
}

describe("the executable", () => {
  test("answers --version and --help, and migrates an up-to-date database as a no-op", () => {
    const version = exe.run(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^rookery \d+\.\d+\.\d+/);
    const help = exe.run(["--help"]);
    expect(help.stdout).toContain("rookery backup <file>");
    const migrate = exe.run(["migrate"]);
    expect(migrate.code).toBe(0);
    expect(migrate.stdout).toContain("Applied 0 migration(s)");
    // Start-up told a person where it listens and where the data lives.
    expect(exe.log()).toContain("Rookery is listening");
    expect(exe.log()).toContain(exe.dataDir);
  });

  test("creates accounts from the command line while serving", () => {
    const created = exe.run(["accounts", "create", "finn", "--email", "finn@e2e.test", "--password-stdin"], `${PASSWORD}\n`);
    expect(created.code).toBe(0);
    expect(created.stdout.trim()).toMatch(/^\d+$/);
    const taken = exe.run(["accounts", "create", "finn", "--email", "other@e2e.test", "--password", PASSWORD]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain("Username has already been taken");
    expect(exe.run(["accounts", "list"]).stdout).toContain("finn");
  });

  // Skipped in the PostgreSQL test mode: `backup` copies SQLite's database file.
  test.skipIf(onPostgres)("backs up the database while serving", () => {
    const target = join(exe.cwd, "backup.sqlite3");
    const backup = exe.run(["backup", target]);
    expect(backup.code).toBe(0);
    expect(existsSync(target)).toBe(true);
    const copy = new Database(target, { readonly: true });
    expect((copy.query("SELECT count(*) AS n FROM accounts WHERE username = 'finn'").get() as { n: number }).n).toBe(1);
    copy.close();
  });

  test("answers the first ActivityPub request (Fedify, a chunk of the file loaded at first use) and the command that reaches other servers", async () => {
    const res = await fetch(`${exe.url}/users/finn`, { headers: { accept: "application/activity+json" } });
    expect(res.status).toBe(200);
    const actor = (await res.json()) as { id: string; type: string; publicKey: { publicKeyPem: string } };
    expect(actor.id).toBe(`${exe.url}/users/finn`);
    expect(actor.type).toBe("Person");
    expect(actor.publicKey.publicKeyPem).toStartWith("-----BEGIN PUBLIC KEY-----");
    // A command whose module is loaded by import() (main.ts): it runs, and refuses bad input as before.
    const relays = exe.run(["relays", "list"]);
    expect(relays.code).toBe(0);
    expect(exe.run(["relays", "add", "not a url"]).code).toBe(1);
  });
});

describe("masto.js against the executable", () => {
  test("video and a voice note, read by the ffmpeg built into the executable", async () => {
    const vera = await signUp("vera");
    const instance = await vera.client.v2.instance.fetch();
    expect(instance.configuration.mediaAttachments.supportedMimeTypes).toContain("video/mp4");
    // masto.js polls GET /api/v1/media/:id until the queue has processed the v2 upload.
    const video = await vera.client.v2.media.create({ file: new Blob([(await clips.webm()) as Uint8Array<ArrayBuffer>], { type: "video/webm" }), description: "a test card" });
    expect(video.type).toBe("video");
    expect(video.url).toMatch(/\.mp4$/);
    const served = await fetch(video.url!);
    expect(served.headers.get("content-type")).toBe("video/mp4");
    const probe = await probeBytes(new Uint8Array(await served.arrayBuffer()));
    expect(probe.streams.map((s) => s.codec_name)).toEqual(["h264", "aac"]);
    const voice = await vera.client.v1.media.create({ file: new Blob([(await clips.opus()) as Uint8Array<ArrayBuffer>], { type: "audio/ogg" }) });
    expect(voice.type).toBe("audio");
    // Unlisted: the next test reads the local public timeline of this same server. A video goes alone.
    const status = await vera.client.v1.statuses.create({ status: "watch", mediaIds: [video.id], visibility: "unlisted" });
    expect(status.mediaAttachments.map((m) => m.type)).toEqual(["video"]);
    const voiceNote = await vera.client.v1.statuses.create({ status: "listen", mediaIds: [voice.id], visibility: "unlisted" });
    expect(voiceNote.mediaAttachments.map((m) => m.type)).toEqual(["audio"]);
    // The embedded tools were unpacked under DATA_DIR/tools, not taken from the system.
    expect(readdirSync(join(exe.dataDir, "tools")).sort()).toEqual([expect.stringMatching(/^ffmpeg-/), expect.stringMatching(/^ffprobe-/)]);
  });

  test("sign up, post with media and a poll, favourite, boost, bookmark, pin, context, timelines, streams, delete and redraft", async () => {
    const erin = await signUp("erin");
    const gus = await signUp("gus");
    const erinMe = await erin.client.v1.accounts.verifyCredentials();
    const gusMe = await gus.client.v1.accounts.verifyCredentials();
    await gus.client.v1.accounts.$select(erinMe.id).follow();

    // Gus listens on his user stream, at the URL the instance advertises.
    const instance = await gus.client.v2.instance.fetch();
    const streaming = createStreamingAPIClient({ streamingApiUrl: instance.configuration.urls.streaming, accessToken: gus.token });
    const userStream = streaming.user.subscribe();
    const heard = collectEvents(userStream);
    // Gus's own filter changes reach his user stream (filters_changed): once one is heard, he is subscribed.
    await untilHeard(
      async () => gus.client.v2.filters.$select((await gus.client.v2.filters.create({ title: "probe", context: ["home"] })).id).remove(),
      () => heard.some((e) => e.event === "filters_changed"),
    );

    // Media through the executable's sharp, from a working directory away from the project.
    const media = await erin.client.v2.media.create({ file: new Blob([await png("#224488")], { type: "image/png" }), description: "A blue field" });
    expect(media.type).toBe("image");
    expect(media.url).toContain("/system/media_attachments/");
    expect(media.meta?.original?.width).toBe(320);
    expect(media.blurhash).toBeTruthy();
    const picture = await fetch(media.url!);
    expect(picture.status).toBe(200);

    const withMedia = await erin.client.v1.statuses.create({ status: "Hello #e2e with a picture", mediaIds: [media.id], visibility: "public" });
    expect(withMedia.mediaAttachments.map((m) => m.id)).toEqual([media.id]);
    const streamed = await eventually(() => heard.find((e) => e.event === "update" && e.payload.content.includes("with a picture")), "the update on gus's stream");
    expect(streamed.event === "update" && streamed.payload.id).toBe(withMedia.id);

    const poll = await erin.client.v1.statuses.create({ status: "Tea or coffee?", poll: { options: ["tea", "coffee"], expiresIn: 3600 } });
    const voted = await gus.client.v1.polls.$select(poll.poll!.id).votes.create({ choices: [1] });
    expect(voted.votesCount).toBe(1);
    expect(voted.ownVotes).toEqual([1]);

    const fav = await gus.client.v1.statuses.$select(withMedia.id).favourite();
    expect(fav.favourited).toBe(true);
    expect(fav.favouritesCount).toBe(1);
    const boost = await gus.client.v1.statuses.$select(withMedia.id).reblog();
    expect(boost.reblog?.id).toBe(withMedia.id);
    const bookmarked = await gus.client.v1.statuses.$select(withMedia.id).bookmark();
    expect(bookmarked.bookmarked).toBe(true);
    expect((await gus.client.v1.bookmarks.list()).map((s) => s.id)).toContain(withMedia.id);
    const pinned = await erin.client.v1.statuses.$select(withMedia.id).pin();
    expect(pinned.pinned).toBe(true);
    expect((await erin.client.v1.accounts.$select(erinMe.id).statuses.list({ pinned: true })).map((s) => s.id)).toEqual([withMedia.id]);

    const reply = await gus.client.v1.statuses.create({ status: `@erin lovely`, inReplyToId: withMedia.id });
    const context = await erin.client.v1.statuses.$select(withMedia.id).context.fetch();
    expect(context.descendants.map((s) => s.id)).toEqual([reply.id]);
    expect((await gus.client.v1.statuses.$select(reply.id).context.fetch()).ancestors.map((s) => s.id)).toEqual([withMedia.id]);

    const home = await gus.client.v1.timelines.home.list();
    // gus's own boost is not there: his feed shows the original already (Mastodon's FeedManager).
    expect(home.map((s) => s.id)).toEqual([reply.id, poll.id, withMedia.id]);
    const tagged = await createRestAPIClient({ url: exe.url }).v1.timelines.tag.$select("e2e").list();
    expect(tagged.map((s) => s.id)).toEqual([withMedia.id]);
    const publicTimeline = await createRestAPIClient({ url: exe.url }).v1.timelines.public.list({ local: true });
    // Neither the reply to someone else nor the boost: Mastodon's public timeline leaves both out.
    expect(publicTimeline.map((s) => s.id)).toEqual([poll.id, withMedia.id]);
    const notifications = await erin.client.v1.notifications.list();
    expect(new Set(notifications.map((n) => n.type))).toEqual(new Set(["follow", "favourite", "reblog", "mention"]));

    // Delete and redraft: the source text comes back, the media can be used again.
    // Gus's boost goes with it (its own delete comes first).
    const deleted = await erin.client.v1.statuses.$select(withMedia.id).remove();
    expect(deleted.text).toBe("Hello #e2e with a picture");
    const deletion = await eventually(() => heard.find((e) => e.event === "delete" && e.payload === withMedia.id), "the delete on gus's stream");
    expect(deletion.payload).toBe(withMedia.id);
    const redraft = await erin.client.v1.statuses.create({ status: deleted.text!, mediaIds: deleted.mediaAttachments.map((m) => m.id) });
    expect(redraft.content).toContain("with a picture");
    expect(redraft.mediaAttachments.map((m) => m.id)).toEqual([media.id]);
    await expect(gus.client.v1.statuses.$select(withMedia.id).fetch()).rejects.toMatchObject({ statusCode: 404 });
    expect(gusMe.username).toBe("gus");

    userStream.unsubscribe();
    streaming.close();
  }, 60_000);
});

describe("megalodon against the executable", () => {
  test("authorization-code login through the HTML pages, then post, read, favourite, stream and delete", async () => {
    const anonymous = generator("mastodon", exe.url);
    const redirectUri = "https://app.example/callback";
    const app = await anonymous.registerApp("megalodon e2e", { scopes: ["read", "write", "follow"], redirect_uris: redirectUri });
    // The pages, as a browser would post them.
    const browser = new BrowserSession(exe.url);
    const page = await browser.get(app.url!.replace(exe.url, ""));
    expect(page.status).toBe(200);
    const [login] = parseForms(page.text);
    const consent = await browser.submit(login!, { username: "finn@e2e.test", password: PASSWORD });
    const [approve] = parseForms(consent.text);
    const redirect = await browser.submit(approve!);
    const code = new URL(redirect.headers.get("location")!).searchParams.get("code")!;
    const token = await anonymous.fetchAccessToken(app.client_id, app.client_secret, code, redirectUri);

    const finn = generator("mastodon", exe.url, token.access_token);
    expect((await finn.verifyAccountCredentials()).data.username).toBe("finn");
    const socket = await finn.userStreaming();
    const streamed = new Promise<Entity.Status>((resolve) => socket.on("update", (s: Entity.Status) => resolve(s)));
    await new Promise((resolve) => socket.on("connect", resolve));

    // Under Node, megalodon sends files as streams (the form-data package).
    const file = join(exe.cwd, "red.png");
    await Bun.write(file, await png("#aa3300"));
    const upload = await finn.uploadMedia(createReadStream(file), { description: "red" });
    const posted = await finn.postStatus("megalodon was here", { media_ids: [upload.data.id], visibility: "unlisted" });
    const status = posted.data as Entity.Status;
    expect(status.media_attachments.map((m) => m.id)).toEqual([upload.data.id]);
    expect((await streamed).id).toBe(status.id);
    expect((await finn.getHomeTimeline()).data.map((s) => s.id)).toEqual([status.id]);
    expect((await finn.favouriteStatus(status.id)).data.favourited).toBe(true);
    expect((await finn.getStatusContext(status.id)).data.ancestors).toEqual([]);
    await finn.deleteStatus(status.id);
    await expect(finn.getStatus(status.id)).rejects.toMatchObject({ response: { status: 404, data: { error: "Record not found" } } });
    socket.stop();
  }, 60_000);
});
