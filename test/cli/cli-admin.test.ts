import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliIn } from "../support/cli.ts";
import { Client } from "../support/http.ts";
import { startTestServer } from "../support/server.ts";
import { databaseEnv, dropDatabase } from "../support/test-database.ts";
import { SseClient } from "../support/streams.ts";
import { eventually } from "../support/wait.ts";
import { createUser, postStatus } from "../support/fixtures.ts";
import sharp from "../../src/media-files/sharp.ts";

// The operator's commands for what the instance endpoints show; one DATA_DIR for the file.
const dataDir = mkdtempSync(join(tmpdir(), "rookery-cli-admin-"));
// In the PostgreSQL test mode the directory's database is made first: the commands run before any server and are told it.
await databaseEnv(dataDir);
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await dropDatabase(dataDir);
});
const cli = cliIn(dataDir);
// A new data directory: the database is made by migrate (or the server), never by another command.
if (cli(["migrate"]).code !== 0) throw new Error("migrate failed");

describe("rookery rules", () => {
  test("add prints the id, list shows them in order, remove takes one off; the API shows the same", async () => {
    expect(cli(["rules", "list"]).stdout).toBe("No rules yet.\n");
    const first = cli(["rules", "add", "Be kind", "--hint", "No harassment"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const id = first.stdout.trim();
    expect(id).toMatch(/^\d+$/);
    const second = cli(["rules", "add", "No spam"]).stdout.trim();
    expect(cli(["rules", "list"]).stdout).toBe(`${id}\tBe kind\tNo harassment\n${second}\tNo spam\n`);

    const server = await startTestServer({}, { dataDir });
    try {
      const http = new Client(server.base);
      expect((await http.get("/api/v1/instance/rules")).body).toEqual([
        { id, text: "Be kind", hint: "No harassment" },
        { id: second, text: "No spam", hint: "" },
      ]);
      // Written while the server runs: its next answer has it.
      expect(cli(["rules", "remove", id]).stdout).toBe(`Removed rule ${id}\n`);
      expect((await http.get("/api/v1/instance/rules")).body).toEqual([{ id: second, text: "No spam", hint: "" }]);
    } finally {
      await server.stop();
    }
    cli(["rules", "remove", second]);
  });

  test("a blank rule, an unknown id or command stops with a message and changes nothing", () => {
    for (const [args, message] of [
      [["rules", "add", "  "], "Text can't be blank"],
      [["rules", "add", "x".repeat(301)], "Text is too long (maximum is 300 characters)"],
      [["rules", "add"], "rules add needs the rule"],
      [["rules", "remove", "424242"], "no rule with id 424242"],
      [["rules", "remove"], "no rule with id"],
      [["rules", "shuffle"], 'unknown rules command "shuffle"'],
    ] as const) {
      const res = cli([...args]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(message);
    }
    expect(cli(["rules", "list"]).stdout).toBe("No rules yet.\n");
  });
});

describe("rookery description", () => {
  test("set from an argument or standard input, show, and the API's extended description", async () => {
    expect(cli(["description", "show"]).stdout).toBe("No extended description yet.\n");
    expect(cli(["description", "set", "First words"]).stdout).toBe("Extended description updated\n");
    expect(cli(["description", "set", "--file", "-"], {}, "A server for friends.\n\nBe nice.\n").code).toBe(0);
    expect(cli(["description", "show"]).stdout).toStartWith("A server for friends.\n\nBe nice.\n(updated ");
    const server = await startTestServer({}, { dataDir });
    try {
      const res = await new Client(server.base).get("/api/v1/instance/extended_description");
      expect(res.body.content).toBe("<p>A server for friends.</p><p>Be nice.</p>");
      expect(res.body.updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    } finally {
      await server.stop();
    }
    const bad = cli(["description", "set"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("description set needs the text");
    expect(cli(["description", "erase"]).stderr).toContain('unknown description command "erase"');
  });
});

describe("rookery reports", () => {
  test("list shows unresolved reports, --all the resolved too; resolve marks one handled, and the API shows it", async () => {
    expect(cli(["reports", "list"]).stdout).toBe("No unresolved reports.\n");
    const server = await startTestServer({}, { dataDir });
    let reportId: string;
    try {
      const [ann, ben] = [await createUser(server, "ann"), await createUser(server, "ben")];
      const status = await postStatus(ben, { status: "rude" });
      const res = await ann.client.post("/api/v1/reports", { json: { account_id: ben.id, status_ids: [status.id], comment: "Be \"nice\"", category: "legal" } });
      reportId = res.body.id;
      const listed = cli(["reports", "list"]).stdout;
      expect(listed).toMatch(new RegExp(`^${reportId}\t\\S+\topen\tlegal\tann -> ben\tstatuses ${status.id}\t"Be \\\\"nice\\\\""\n$`));
      expect(cli(["reports", "resolve", reportId]).stdout).toBe(`Resolved report ${reportId}\n`);
      // Another process's commit: the server's reads of this turn may share a read transaction
      // begun before it (SqlitePort), and see it from the next turn on.
      await eventually(async () => (await server.ctx.services.reports.find(Number(reportId)))!.report.actionTakenAt !== null, "the resolution seen by the server");
    } finally {
      await server.stop();
    }
    expect(cli(["reports", "list"]).stdout).toBe("No unresolved reports.\n");
    expect(cli(["reports", "list", "--all"]).stdout).toContain(`${reportId}\t`);
    expect(cli(["reports", "list", "--all"]).stdout).toContain("\tresolved 20");
    for (const [args, message] of [
      [["reports", "resolve", "424242"], "no report with id 424242"],
      [["reports", "resolve"], "no report with id"],
      [["reports", "close"], 'unknown reports command "close"'],
    ] as const) {
      const bad = cli([...args]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(message);
    }
  });
});

describe("rookery emoji", () => {
  test("add checks and stores the image, list shows it, remove takes it off; the API lists what is there", async () => {
    const png = join(dataDir, "blob.png");
    writeFileSync(png, await sharp({ create: { width: 32, height: 32, channels: 4, background: "#ff0000" } }).png().toBuffer());
    const jpeg = join(dataDir, "photo.jpg");
    writeFileSync(jpeg, await sharp({ create: { width: 32, height: 32, channels: 3, background: "#ff0000" } }).jpeg().toBuffer());
    expect(cli(["emoji", "list"]).stdout).toBe("No custom emojis yet.\n");
    const added = cli(["emoji", "add", "blob", png, "--category", "Blobs"]);
    expect(added.stderr).toBe("");
    expect(added.stdout).toMatch(/^Added :blob: http:\/\/\S+\/system\/custom_emojis\/\S+\.png\n$/);
    expect(cli(["emoji", "list"]).stdout).toMatch(/^:blob:\tBlobs\thttp:\/\/\S+\.png\n$/);
    for (const [args, message] of [
      [["emoji", "add", "blob", png], "Shortcode has already been taken"],
      [["emoji", "add", "x", png], "Shortcode is invalid"],
      [["emoji", "add", "photo", jpeg], "Image content type is invalid"],
      [["emoji", "add", "missing", join(dataDir, "nothing.png")], "no such file"],
      [["emoji", "add", "blob2"], "emoji add needs a shortcode and an image"],
      [["emoji", "remove", "nope"], "no custom emoji :nope:"],
      [["emoji", "rename"], 'unknown emoji command "rename"'],
    ] as const) {
      const res = cli([...args]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(message);
    }
    const server = await startTestServer({}, { dataDir });
    try {
      const http = new Client(server.base);
      const listed = (await http.get("/api/v1/custom_emojis")).body;
      expect(listed).toEqual([{ shortcode: "blob", url: expect.any(String), static_url: expect.any(String), visible_in_picker: true, category: "Blobs" }]);
      expect((await fetch(listed[0].url)).status).toBe(200);
      expect(cli(["emoji", "remove", ":blob:"]).stdout).toBe("Removed :blob:\n");
      expect((await http.get("/api/v1/custom_emojis")).body).toEqual([]);
      expect((await fetch(listed[0].url)).status).toBe(404);
    } finally {
      await server.stop();
    }
  });
});

describe("rookery announcements", () => {
  test("create prints the id, list shows them, delete takes one down; the API shows the current ones", async () => {
    expect(cli(["announcements", "list"]).stdout).toBe("No announcements.\n");
    const plain = cli(["announcements", "create", "Maintenance tonight"]);
    expect(plain.stderr).toBe("");
    const id = plain.stdout.trim();
    expect(id).toMatch(/^\d+$/);
    const timed = cli(["announcements", "create", "Party", "--starts-at", "2099-12-31T20:00:00Z", "--ends-at=2100-01-01T02:00:00Z", "--all-day"]).stdout.trim();
    const listed = cli(["announcements", "list"]).stdout.split("\n");
    expect(listed[0]).toMatch(new RegExp(`^${id}\t\\S+\t\t"Maintenance tonight"$`));
    expect(listed[1]).toMatch(new RegExp(`^${timed}\t\\S+\t2099-12-31T20:00:00.000Z - 2100-01-01T02:00:00.000Z \\(all day\\)\t"Party"$`));

    const server = await startTestServer({}, { dataDir });
    try {
      const reader = await createUser(server, "announcement_reader");
      const shown = (await reader.client.get("/api/v1/announcements")).body;
      expect(shown.map((a: { id: string }) => a.id)).toEqual([id, timed]);
      expect(shown[1]).toMatchObject({ all_day: true, starts_at: "2099-12-31T20:00:00.000Z", ends_at: "2100-01-01T02:00:00.000Z" });
      // Made and deleted by the CLI while the server runs: its user streams are told.
      const stream = await SseClient.open(`${server.base}/api/v1/streaming/user`, { token: reader.token });
      const third = cli(["announcements", "create", "From the CLI"]).stdout.trim();
      const told = await stream.waitFor((e) => e.event === "announcement");
      expect(JSON.parse(told.data!)).toMatchObject({ id: third, content: "<p>From the CLI</p>" });
      expect(cli(["announcements", "delete", id]).stdout).toBe(`Deleted announcement ${id}\n`);
      expect((await stream.waitFor((e) => e.event === "announcement.delete")).data).toBe(id);
      stream.close();
      // In the order of what they announce: the one without a time by when it was published.
      expect((await reader.client.get("/api/v1/announcements")).body.map((a: { id: string }) => a.id)).toEqual([third, timed]);
      cli(["announcements", "delete", third]);
    } finally {
      await server.stop();
    }
    for (const [args, message] of [
      [["announcements", "create", "  "], "Text can't be blank"],
      [["announcements", "create", "x", "--starts-at", "2099-01-01T00:00:00Z"], "Ends at can't be blank"],
      [["announcements", "create", "x", "--starts-at", "2099-01-02T00:00:00Z", "--ends-at", "2099-01-01T00:00:00Z"], "Ends at must be after the start"],
      [["announcements", "create", "x", "--starts-at", "tomorrow", "--ends-at", "2099-01-01T00:00:00Z"], '--starts-at: "tomorrow" is not a date'],
      [["announcements", "create"], "announcements create needs the text"],
      [["announcements", "delete", id], `no announcement with id ${id}`],
      [["announcements", "publish"], 'unknown announcements command "publish"'],
    ] as const) {
      const res = cli([...args]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(message);
    }
    expect(cli(["announcements", "list"]).stdout.trim().split("\n")).toHaveLength(1);
  });
});
