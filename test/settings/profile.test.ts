/**
 * /settings/profile, /settings/preferences and /settings/notifications: each saves what it says
 * (read back through the API a client uses), and a value the API would refuse is refused in
 * the same words, with nothing saved.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserSession } from "../support/browser.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { formTo, noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let dana: TestUser;
let browser: BrowserSession;

beforeAll(async () => {
  server = await startTestServer();
  dana = await createUser(server, "dana");
  browser = await signedIn(server, "dana");
});
afterAll(() => server.close());

const credentials = async () => (await dana.client.get("/api/v1/accounts/verify_credentials")).body;
const policy = async () => (await dana.client.get("/api/v2/notifications/policy")).body;

describe("public profile", () => {
  test("shows the flags as they are, and saves every one of them", async () => {
    const page = await browser.get("/settings/profile");
    expect(page.text).toMatch(/id="f-discoverable" name="discoverable" value="1" checked/);
    expect(page.text).toMatch(/id="f-locked" name="locked" value="1" aria/);
    // A browser sends the hidden 0 and, for a ticked box, the 1 after it.
    const form = formTo(page, "/settings/profile");
    const res = await browser.post("/settings/profile", {
      form: [
        ["authenticity_token", form.fields.authenticity_token!],
        ...["discoverable", "indexable", "hide_collections", "locked", "bot"].map((k): [string, string] => [k, "0"]),
        ["locked", "1"],
        ["bot", "1"],
        ["hide_collections", "1"],
      ],
    });
    expect(res.status).toBe(303);
    const me = await credentials();
    expect([me.discoverable, me.indexable, me.locked, me.bot, me.hide_collections]).toEqual([false, false, true, true, true]);
    const again = await browser.get("/settings/profile");
    expect(noticeOf(again)).toBe("Changes successfully saved!");
    expect(again.text).toMatch(/id="f-locked" name="locked" value="1" checked/);
    // Fields left out of a post are left as they are.
    const ticket = formTo(again, "/settings/profile").fields.authenticity_token!;
    expect((await browser.post("/settings/profile", { form: { authenticity_token: ticket } })).status).toBe(303);
    const after = await credentials();
    expect([after.locked, after.bot]).toEqual([true, true]);
  });

  test("a value that is no boolean is refused, nothing saved", async () => {
    const before = await credentials();
    const form = formTo(await browser.get("/settings/profile"), "/settings/profile");
    const res = await browser.post("/settings/profile", { form: [["authenticity_token", form.fields.authenticity_token!], ["bot[]", "1"], ["locked", "0"]] });
    expect(res.status).toBe(422);
    expect(noticeOf(res)).toBe("Validation failed: Bot is invalid");
    expect(await credentials()).toEqual(before);
  });
});

describe("posting defaults", () => {
  test("visibility, quote policy, language and sensitive media are saved", async () => {
    const page = await browser.get("/settings/preferences");
    expect(page.text).toContain('<option value="public" selected>');
    expect(page.text).toContain('<option value="de">German (de)</option>');
    const { post, page: after } = await submitOn(browser, "/settings/preferences", "/settings/preferences", { privacy: "private", quote_policy: "nobody", language: "de", sensitive: "1" });
    expect(post.status).toBe(303);
    expect(noticeOf(after)).toBe("Changes successfully saved!");
    const source = (await credentials()).source;
    expect([source.privacy, source.quote_policy, source.language, source.sensitive]).toEqual(["private", "nobody", "de", true]);
    expect(after.text).toContain('<option value="de" selected>German (de)</option>');
    // "As the app decides": no language.
    await submitOn(browser, "/settings/preferences", "/settings/preferences", { language: "" });
    expect((await credentials()).source.language).toBeNull();
  });

  test("a visibility, quote policy or language the API refuses is refused here in its words, nothing saved", async () => {
    const before = (await credentials()).source;
    for (const [fields, error] of [
      [{ privacy: "direct" }, "Validation failed: Privacy is not included in the list"],
      [{ quote_policy: "everyone" }, "Validation failed: Quote policy is not included in the list"],
      [{ language: "klingon" }, "Validation failed: Language is not included in the list"],
    ] as const) {
      const { post } = await submitOn(browser, "/settings/preferences", "/settings/preferences", { ...fields, sensitive: "0" });
      expect([fields, post.status, noticeOf(post)]).toEqual([fields, 422, error]);
      // The page is shown again to be corrected, with a new ticket.
      expect(formTo(post, "/settings/preferences").fields.authenticity_token).toBeTruthy();
    }
    expect((await credentials()).source).toEqual(before);
  });
});

describe("notification policy", () => {
  test("every rule is saved as the API reads it", async () => {
    const page = await browser.get("/settings/notifications");
    expect(page.text).toContain("Unsolicited private mentions");
    const fields = { for_not_following: "filter", for_not_followers: "drop", for_new_accounts: "filter", for_private_mentions: "accept", for_limited_accounts: "drop" };
    const { post, page: after } = await submitOn(browser, "/settings/notifications", "/settings/notifications", fields);
    expect(post.status).toBe(303);
    expect(noticeOf(after)).toBe("Changes successfully saved!");
    expect(await policy()).toMatchObject(fields);
    expect(after.text).toMatch(/<select id="f-for_not_followers"[^>]*>[\s\S]*?<option value="drop" selected>/);
  });

  test("a level that is none of accept, filter, drop is refused, nothing saved", async () => {
    const before = await policy();
    const { post } = await submitOn(browser, "/settings/notifications", "/settings/notifications", { for_new_accounts: "mute" });
    expect(post.status).toBe(422);
    expect(noticeOf(post)).toBe("Validation failed: For new accounts is not included in the list");
    expect(await policy()).toEqual(before);
  });

  test("without the ticket nothing is saved", async () => {
    const before = await policy();
    const res = await browser.post("/settings/notifications", { form: { for_new_accounts: "accept" } });
    expect(res.status).toBe(422);
    expect(await policy()).toEqual(before);
  });
});
