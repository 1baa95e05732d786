/**
 * The machinery of the signed-in pages, through /settings: the sign-in they send a stranger to,
 * the ticket every form carries (and what happens to a post without it), the notice after a
 * post, the role guard, the headers, and signing out.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MemberPages } from "../../src/http/member-pages.ts";
import { BrowserSession } from "../support/browser.ts";
import { createUser, PASSWORD, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { formTo, noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  await createUser(server, "bob");
});
afterAll(() => server.close());

// Boolean columns read 1/0 on SQLite, true/false on PostgreSQL: as numbers here.
const flags = async (id: number) => {
  const row = (await server.database.port.get<Record<"discoverable" | "bot" | "locked", unknown>>("SELECT discoverable, bot, locked FROM accounts WHERE id = ?", [id]))!;
  const n = (v: unknown) => (v === null ? null : Number(v));
  return { discoverable: n(row.discoverable), bot: n(row.bot), locked: n(row.locked) };
};

describe("signed out", () => {
  test("a page sends the browser to the sign-in, which brings it back", async () => {
    const browser = new BrowserSession(server.base);
    const res = await browser.get("/settings/preferences?x=1");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${server.base}/oauth/sign_in?return_to=${encodeURIComponent("/settings/preferences?x=1")}`);
    const form = await browser.get(new URL(res.headers.get("location")!).pathname + new URL(res.headers.get("location")!).search);
    const signIn = await browser.submit(formTo(form, "/oauth/sign_in"), { username: "alice", password: PASSWORD });
    expect(signIn.headers.get("location")).toBe(`${server.base}/settings/preferences?x=1`);
    expect((await browser.get("/settings/preferences")).status).toBe(200);
  });

  test("/settings leads to the sign-in, then to the profile page", async () => {
    const http = new Client(server.base);
    const res = await http.get("/settings");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("/oauth/sign_in?return_to=%2Fsettings");
    const browser = await signedIn(server, "alice");
    const again = await browser.get("/settings");
    expect(again.headers.get("location")).toBe(`${server.base}/settings/profile`);
  });

  test("a post without a session does nothing and leads to the sign-in", async () => {
    const before = await flags(alice.account.id);
    const res = await new Client(server.base).post("/settings/profile", { form: { bot: "1" }, headers: { origin: server.base } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("/oauth/sign_in?return_to=%2Fsettings%2Fprofile");
    expect((await flags(alice.account.id))).toEqual(before);
  });

  test("a session cookie that names no session is no sign-in", async () => {
    const res = await new Client(server.base).get("/settings/profile", { headers: { cookie: "_rookery_session=forged" } });
    expect(res.status).toBe(303);
  });
});

describe("a page", () => {
  test("is HTML for this browser only, runs no script, and cannot be framed", async () => {
    const browser = await signedIn(server, "alice");
    const page = await browser.get("/settings/profile");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("private, no-store");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("script-src");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.text).not.toContain("<script");
    expect(page.text).not.toContain("style=");
    expect(page.text).toContain('<link rel="stylesheet" href="/web/rookery.css">');
  });

  test("has one heading, a navigation marking where it is, and a label for every control", async () => {
    const browser = await signedIn(server, "alice");
    const page = await browser.get("/settings/profile");
    expect(page.text.match(/<h1>/g)).toHaveLength(1);
    expect(page.text).toContain("<h1>Public profile</h1>");
    expect(page.text).toContain('<nav class="area" aria-label="Settings">');
    expect(page.text).toContain('<a href="/settings/profile" aria-current="page">Public profile</a>');
    expect(page.text).toContain("Signed in as <bdi>@alice</bdi>");
    for (const m of page.text.matchAll(/<(?:input|select)\b[^>]*>/g)) {
      if (m[0].includes('type="hidden"')) continue;
      const id = /id="([^"]+)"/.exec(m[0])?.[1];
      expect([m[0], id && page.text.includes(`<label for="${id}">`)]).toEqual([m[0], true]);
    }
    // Staff links are for staff.
    expect(page.text).not.toContain('href="/admin"');
  });

  test("the stylesheet has the members' pages, light and dark, with a visible focus", async () => {
    const css = (await new Client(server.base).get("/web/rookery.css")).text;
    expect(css).toContain("prefers-color-scheme:dark");
    expect(css).toContain(":focus-visible");
    expect(css).toContain("nav.area");
  });
});

describe("a page that is not there", () => {
  test("is a 404 page for a member, and the sign-in for a stranger", async () => {
    const browser = await signedIn(server, "alice");
    const res = await browser.get("/settings/nothing-here");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(noticeOf(res)).toBe("There is no such page in the settings.");
    expect((await new Client(server.base).get("/settings/nothing-here")).status).toBe(303);
    // The pages that are there still answer.
    expect((await browser.get("/settings/export/blocks.csv")).status).toBe(200);
  });
});

describe("a form's ticket", () => {
  test("a post with the page's ticket does what it says, and the page after it says so once", async () => {
    const browser = await signedIn(server, "alice");
    const { post, page } = await submitOn(browser, "/settings/profile", "/settings/profile", { bot: "1" });
    expect(post.status).toBe(303);
    expect(post.headers.get("location")).toBe(`${server.base}/settings/profile`);
    expect(noticeOf(page)).toBe("Changes successfully saved!");
    expect((await flags(alice.account.id)).bot).toBe(1);
    // The notice is read once.
    expect(noticeOf(await browser.get("/settings/profile"))).toBeNull();
    await submitOn(browser, "/settings/profile", "/settings/profile", { bot: "0" });
    expect((await flags(alice.account.id)).bot).toBe(0);
  });

  test("without a ticket, with a forged or another session's ticket, or from another site: refused, nothing changed", async () => {
    const browser = await signedIn(server, "alice");
    const page = await browser.get("/settings/profile");
    const form = formTo(page, "/settings/profile");
    const before = await flags(alice.account.id);

    const missing = await browser.post("/settings/profile", { form: { bot: "1" } });
    expect(missing.status).toBe(422);
    expect(noticeOf(missing)).toBe("Your form expired or was incomplete. Please try again.");
    const forged = await browser.post("/settings/profile", { form: { ...form.fields, authenticity_token: `${form.fields.authenticity_token}x`, bot: "1" } });
    expect(forged.status).toBe(422);

    // The same account signed in in another browser: its ticket is not this browser's.
    const other = await signedIn(server, "alice");
    const otherTicket = formTo(await other.get("/settings/profile"), "/settings/profile").fields.authenticity_token!;
    const foreign = await browser.post("/settings/profile", { form: { ...form.fields, authenticity_token: otherTicket, bot: "1" } });
    expect(foreign.status).toBe(403);
    expect(noticeOf(foreign)).toContain("another browser");

    const elsewhere = await browser.post("/settings/profile", { form: { ...form.fields, bot: "1" }, headers: { origin: "https://evil.example" } });
    expect(elsewhere.status).toBe(403);
    expect(noticeOf(elsewhere)).toBe("The request did not come from this server's pages.");
    // No Origin and no Referer: a browser always sends one of them with a form.
    const bare = await new Client(server.base).post("/settings/profile", { form: { ...form.fields, bot: "1" }, headers: { cookie: browser.cookieHeader } });
    expect(bare.status).toBe(403);

    for (const res of [missing, forged, foreign, elsewhere, bare]) expect(res.headers.get("location")).toBeNull();
    expect((await flags(alice.account.id))).toEqual(before);
  });

  test("a ticket of another account's session is refused", async () => {
    const browser = await signedIn(server, "alice");
    const bob = await signedIn(server, "bob");
    const bobTicket = formTo(await bob.get("/settings/profile"), "/settings/profile").fields.authenticity_token!;
    const before = await flags(alice.account.id);
    const res = await browser.post("/settings/profile", { form: { authenticity_token: bobTicket, locked: "1" } });
    expect(res.status).toBe(403);
    expect((await flags(alice.account.id))).toEqual(before);
  });
});

describe("roles", () => {
  const area = { name: "Administration", root: "/admin", role: "admin" as const, nav: [] };
  const request = (browser: BrowserSession) => new Request(`${server.base}/admin`, { headers: { cookie: browser.cookieHeader } });

  test("an area for admins is a 403 page for a user and a moderator, and opens for an admin and the owner", async () => {
    const carol = await createUser(server, "carol");
    const pages = new MemberPages(server.ctx, area);
    const browser = await signedIn(server, "carol");
    const setRole = (role: string) => server.database.port.run("UPDATE users SET role = ? WHERE account_id = ?", [role, carol.account.id]);
    for (const role of ["user", "moderator"]) {
      await setRole(role);
      const refused = await pages.guard(request(browser));
      expect(refused).toBeInstanceOf(Response);
      expect((refused as Response).status).toBe(403);
      expect(await (refused as Response).text()).toContain("You are not allowed to see this page.");
    }
    for (const role of ["admin", "owner"]) {
      await setRole(role);
      const viewer = await pages.guard(request(browser));
      expect(viewer).not.toBeInstanceOf(Response);
      expect(viewer).toMatchObject({ role, account: { username: "carol" } });
    }
    // A moderator sees the way to the administration in the settings.
    await setRole("moderator");
    expect((await browser.get("/settings/profile")).text).toContain('<a href="/admin">Administration</a>');
    await setRole("user");
  });
});

describe("signing out", () => {
  test("ends this browser's session only, and needs the ticket", async () => {
    const browser = await signedIn(server, "alice");
    const other = await signedIn(server, "alice");
    const page = await browser.get("/settings/profile");
    const refused = await browser.post("/settings/sign_out", { form: {} });
    expect(refused.status).toBe(422);
    expect((await browser.get("/settings/profile")).status).toBe(200);

    const res = await browser.submit(formTo(page, "/settings/sign_out"));
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${server.base}/`);
    expect(res.headers.getSetCookie().some((c) => c.startsWith("_rookery_session=;") && c.includes("Max-Age=0"))).toBe(true);
    expect((await browser.get("/settings/profile")).status).toBe(303);
    expect((await other.get("/settings/profile")).status).toBe(200);
  });
});
