/**
 * /settings/aliases and /settings/migration over the services the API uses: an alias is added
 * and removed, a move needs the password and the new account's alias, a redirect needs
 * neither, and is cancelled; refusals say why and change nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserSession } from "../support/browser.ts";
import { createUser, PASSWORD, type TestUser } from "../support/fixtures.ts";
import { noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let domain: string;
let hana: TestUser;
let ivan: TestUser;
let hanaBrowser: BrowserSession;
let ivanBrowser: BrowserSession;

beforeAll(async () => {
  server = await startTestServer();
  domain = new URL(server.base).host;
  hana = await createUser(server, "hana");
  ivan = await createUser(server, "ivan");
  await createUser(server, "jo");
  hanaBrowser = await signedIn(server, "hana");
  ivanBrowser = await signedIn(server, "ivan");
});
afterAll(() => server.close());

const aliasesOf = async (user: TestUser) => {
  const row = (await server.database.port.get<{ a: string }>("SELECT also_known_as AS a FROM accounts WHERE id = ?", [user.account.id]))!;
  return JSON.parse(row.a) as string[];
};
const movedTo = async (user: TestUser) => (await server.database.port.get<{ m: number | null }>("SELECT moved_to_account_id AS m FROM accounts WHERE id = ?", [user.account.id]))!.m;

describe("aliases", () => {
  test("added by handle, listed by address, removed", async () => {
    const { post, page } = await submitOn(ivanBrowser, "/settings/aliases", "/settings/aliases", { alias: `@hana@${domain}` });
    expect(post.status).toBe(303);
    expect(noticeOf(page)).toBe(`Alias ${server.base}/users/hana added.`);
    expect(await aliasesOf(ivan)).toEqual([`${server.base}/users/hana`]);
    expect(page.text).toContain(`<code>${server.base}/users/hana</code>`);
    expect(page.text).toContain(`This account is <code>@ivan@${domain}</code>`);

    await submitOn(ivanBrowser, "/settings/aliases", "/settings/aliases", { alias: `@jo@${domain}` });
    const { page: after } = await submitOn(ivanBrowser, "/settings/aliases", "/settings/aliases/remove", { alias: `${server.base}/users/jo` }, 1);
    expect(noticeOf(after)).toBe(`Alias ${server.base}/users/jo removed.`);
    expect(await aliasesOf(ivan)).toEqual([`${server.base}/users/hana`]);
  });

  test("blank, not an account, itself, not an alias, or without the ticket: refused, nothing changed", async () => {
    const before = await aliasesOf(ivan);
    for (const [alias, status, error] of [
      ["", 400, "Enter the handle or address of the old account."],
      ["ftp://x.example/u", 400, "invalid also_known_as_uri (ftp://x.example/u) provided in account alias request: uri must not be empty and scheme must be http or https"],
      [`@nobody@${domain}`, 422, `error dereferencing also_known_as_uri (@nobody@${domain}) account: no account could be fetched there`],
      [`@ivan@${domain}`, 422, "an account cannot be an alias of itself"],
    ] as const) {
      const { post } = await submitOn(ivanBrowser, "/settings/aliases", "/settings/aliases", { alias });
      expect([alias, post.status, noticeOf(post)]).toEqual([alias, status, error]);
    }
    const { post: notOne } = await submitOn(ivanBrowser, "/settings/aliases", "/settings/aliases/remove", { alias: `${server.base}/users/jo` });
    expect([notOne.status, noticeOf(notOne)]).toEqual([400, "That account is not one of your aliases."]);
    const noTicket = await ivanBrowser.post("/settings/aliases/remove", { form: { alias: `${server.base}/users/hana` } });
    expect(noTicket.status).toBe(422);
    expect(await aliasesOf(ivan)).toEqual(before);
  });
});

describe("moving", () => {
  test("a wrong password, a blank or unaliased target: refused in the API's words, nothing moved", async () => {
    for (const [fields, status, error] of [
      [{ acct: `@ivan@${domain}`, current_password: "wrong" }, 400, "invalid password provided in account Move request"],
      [{ acct: "", current_password: PASSWORD }, 400, "no moved_to_uri provided in account Move request"],
      [{ acct: `@jo@${domain}`, current_password: PASSWORD }, 422, `target account ${server.base}/users/jo is not aliased to this account via alsoKnownAs; to Move to the target account from this one, you must log in to the target account and set alsoKnownAs to ${server.base}/users/hana`],
    ] as const) {
      const { post } = await submitOn(hanaBrowser, "/settings/migration", "/settings/migration", fields);
      expect([fields, post.status, noticeOf(post)]).toEqual([fields, status, error]);
    }
    const noTicket = await hanaBrowser.post("/settings/migration", { form: { acct: `@ivan@${domain}`, current_password: PASSWORD } });
    expect(noTicket.status).toBe(422);
    expect((await movedTo(hana))).toBeNull();
  });

  test("a redirect needs no alias and is cancelled; a move needs the alias, and then the cooldown shows", async () => {
    const { post, page } = await submitOn(hanaBrowser, "/settings/migration", "/settings/migration", { acct: `@jo@${domain}`, current_password: PASSWORD, redirect_only: "1" });
    expect(post.status).toBe(303);
    expect(noticeOf(page)).toBe(`Your profile now points to @jo@${domain}.`);
    expect(page.text).toContain(`Your account points to <strong><bdi>@jo@${domain}</bdi></strong>`);
    expect((await movedTo(hana))).not.toBeNull();
    const { page: cancelled } = await submitOn(hanaBrowser, "/settings/migration", "/settings/migration/cancel");
    expect(noticeOf(cancelled)).toBe("The redirect is cancelled: your profile is yours again.");
    expect((await movedTo(hana))).toBeNull();

    // ivan names hana among his aliases (the test above): hana may move to him.
    const { post: moved, page: after } = await submitOn(hanaBrowser, "/settings/migration", "/settings/migration", { acct: `@ivan@${domain}`, current_password: PASSWORD });
    expect(moved.status).toBe(303);
    expect(noticeOf(after)).toBe(`Your account has moved to @ivan@${domain}; your followers are being moved.`);
    expect((await movedTo(hana))).toBe(ivan.account.id);
    expect(after.text).toContain("That is after");
    const me = (await hana.client.get("/api/v1/accounts/verify_credentials")).body;
    expect(me.moved?.acct ?? me.moved).toBeTruthy();
  });
});


