/**
 * /settings/import and /settings/export: a CSV uploaded from the page is imported as the API's
 * upload is (its progress on the page and its report), a refused file changes nothing, and
 * every export downloads with the browser's session alone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserSession } from "../support/browser.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { formTo, noticeOf, signedIn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";

let server: TestServer;
let domain: string;
let kim: TestUser;
let lee: TestUser;
let browser: BrowserSession;

beforeAll(async () => {
  server = await startTestServer();
  domain = new URL(server.base).host;
  kim = await createUser(server, "kim");
  lee = await createUser(server, "lee");
  await createUser(server, "max");
  browser = await signedIn(server, "kim");
});
afterAll(() => server.close());

const importCount = async () => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM imports"))!.n;

/** The import form posted as a browser posts it: multipart, with the page's ticket. */
async function uploadFromPage(fields: Record<string, string>, csv: string | null, ticket?: string) {
  const page = await browser.get("/settings/import");
  const form = new FormData();
  form.append("authenticity_token", ticket ?? formTo(page, "/settings/import").fields.authenticity_token!);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (csv !== null) form.append("data", new File([csv], "following_accounts.csv", { type: "text/csv" }));
  return browser.post("/settings/import", { multipart: form });
}

describe("import", () => {
  test("a following list uploaded from the page is followed; the page shows its progress and report", async () => {
    const page = await browser.get("/settings/import");
    expect(page.text).toContain('enctype="multipart/form-data"');
    expect(page.text).toContain('<label for="f-data">CSV file</label>');
    const res = await uploadFromPage({ type: "following", mode: "merge" }, `Account address,Show boosts\nlee@${domain},true\nnobody@${domain},true\n`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${server.base}/settings/import`);
    const after = await browser.get("/settings/import");
    expect(noticeOf(after)).toBe("Your file was uploaded: 2 entries will be imported.");
    const id = /href="\/settings\/imports\/(\d+)"/.exec(after.text)![1]!;
    const report = await eventually(async () => {
      const r = await browser.get(`/settings/imports/${id}`);
      return r.text.includes("<dd>Finished") ? r : null;
    }, "the import to finish");
    expect(report.text).toContain('<progress max="2" value="2"');
    expect(report.text).toContain("<dt>Imported</dt><dd>1</dd>");
    expect(report.text).toContain("<tr><td>3</td><td><code>nobody</code></td><td>no such account: there is no account nobody on this server</td></tr>");
    const following = (await kim.client.get(`/api/v1/accounts/${kim.id}/following`)).body.map((a: { acct: string }) => a.acct);
    expect(following).toEqual(["lee"]);
  });

  test("no file, an unknown type, an unreadable file, or no ticket: refused, nothing queued", async () => {
    const before = await importCount();
    for (const [fields, csv, error] of [
      [{ type: "following" }, null, "Validation failed: Data can't be blank"],
      [{ type: "statuses" }, `lee@${domain}\n`, "Validation failed: Type must be one of following, blocks, mutes, domain_blocks, bookmarks, lists"],
      [{ type: "following", mode: "replace" }, `lee@${domain}\n`, "Validation failed: Mode must be merge or overwrite"],
    ] as const) {
      const res = await uploadFromPage(fields, csv);
      expect([fields, res.status, noticeOf(res)]).toEqual([fields, 422, error]);
    }
    const noTicket = await uploadFromPage({ type: "following" }, `lee@${domain}\n`, "forged");
    expect(noTicket.status).toBe(422);
    expect((await importCount())).toBe(before);
  });

  test("signed out, an upload is not read: the sign-in is the answer, nothing queued", async () => {
    const before = await importCount();
    const form = new FormData();
    form.append("type", "following");
    form.append("data", new File([`lee@${domain}\n`], "f.csv", { type: "text/csv" }));
    const res = await new Client(server.base).post("/settings/import", { multipart: form, headers: { origin: server.base } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${server.base}/oauth/sign_in?return_to=%2Fsettings%2Fimport`);
    expect((await importCount())).toBe(before);
  });

  test("another member's import is not found", async () => {
    const lees = await signedIn(server, "lee");
    const id = (await server.ctx.services.imports.list(kim.account.id))[0]!.id;
    expect((await lees.get(`/settings/imports/${id}`)).status).toBe(404);
  });
});

describe("export", () => {
  test("the page counts each list and links its file; each downloads with the session alone", async () => {
    await kim.client.post(`/api/v1/accounts/${lee.id}/block`);
    const page = await browser.get("/settings/export");
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<td>Blocks<\/td><td>1<\/td>/);
    for (const path of ["following.csv", "followers.csv", "lists.csv", "blocks.csv", "mutes.csv", "domain_blocks.csv", "bookmarks.csv", "archive.zip", "archive.tar.gz"]) {
      expect(page.text).toContain(`href="/settings/export/${path}"`);
    }
    const blocks = await browser.get("/settings/export/blocks.csv");
    expect(blocks.status).toBe(200);
    expect(blocks.headers.get("content-disposition")).toBe('attachment; filename="blocked_accounts.csv"');
    expect(blocks.text).toBe(`lee@${domain}\n`);
    const zip = await fetch(`${server.base}/settings/export/archive.zip`, { headers: { cookie: browser.cookieHeader } });
    expect(zip.status).toBe(200);
    expect(zip.headers.get("content-type")).toBe("application/zip");
    const bytes = new Uint8Array(await zip.arrayBuffer());
    expect([bytes[0], bytes[1]]).toEqual([0x50, 0x4b]);
  });

  test("signed out, a download leads to the sign-in and gives nothing", async () => {
    const res = await new Client(server.base).get("/settings/export/following.csv");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("/oauth/sign_in?return_to=%2Fsettings%2Fexport%2Ffollowing.csv");
    expect(res.text).toBe("");
  });
});
