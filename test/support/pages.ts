import { expect } from "bun:test";
import { BrowserSession } from "./browser.ts";
import { PASSWORD } from "./fixtures.ts";
import { decodeEntities, parseForms, type HtmlForm } from "./html.ts";
import type { Res } from "./http.ts";
import type { TestServer } from "./server.ts";

/** A browser signed in through the member sign-in (/oauth/sign_in), as a person signs in to the pages. */
export async function signedIn(server: TestServer, username: string, password = PASSWORD): Promise<BrowserSession> {
  const browser = new BrowserSession(server.base);
  const page = await browser.get("/oauth/sign_in", { query: { return_to: "/settings" } });
  expect(page.status).toBe(200);
  const res = await browser.submit(parseForms(page.text)[0]!, { username, password });
  expect(res.status).toBe(303);
  expect(browser.cookies.has("_rookery_session")).toBe(true);
  return browser;
}

/**
 * The form of a page posting to `action` (the sign-out form of the header is not it), with the
 * fields a browser would send: an unticked checkbox sends nothing, so its hidden "0" stands.
 */
export function formTo(page: Res, action: string, index = 0): HtmlForm {
  const all = parseForms(page.text);
  const inners = [...page.text.matchAll(/<form\b[^>]*>([\s\S]*?)<\/form>/gi)].map((m) => m[1]!);
  const matching = all.map((f, i) => ({ f, inner: inners[i]! })).filter(({ f }) => f.action === action);
  const found = matching[index];
  if (!found) throw new Error(`no form to ${action} on the page (forms: ${all.map((f) => f.action).join(", ")})`);
  const fields = { ...found.f.fields };
  for (const box of found.inner.matchAll(/<input\b[^>]*type="checkbox"[^>]*>/gi)) {
    const name = /\sname="([^"]*)"/.exec(box[0])?.[1];
    if (name === undefined || /\schecked\b/.test(box[0])) continue;
    const hidden = new RegExp(`<input type="hidden" name="${name.replace(/[[\]]/g, "\\$&")}" value="([^"]*)">`).exec(found.inner);
    if (hidden) fields[name] = hidden[1]!;
    else delete fields[name];
  }
  return { ...found.f, fields };
}

/** Opens `path`, submits its form to `action` with `fields`, and follows the redirect to the page it leads to. */
export async function submitOn(browser: BrowserSession, path: string, action: string, fields: Record<string, string> = {}, index = 0): Promise<{ post: Res; page: Res }> {
  const before = await browser.get(path);
  expect(before.status).toBe(200);
  const post = await browser.submit(formTo(before, action, index), fields);
  if (post.status !== 303) return { post, page: post };
  const location = new URL(post.headers.get("location")!);
  return { post, page: await browser.get(`${location.pathname}${location.search}`) };
}

/** The text of the notice a page shows after a post (role=status) or of its error (role=alert), if it shows one. */
export function noticeOf(page: Res): string | null {
  const m = /<p id="flash" class="notice[^"]*" role="(?:status|alert)">([\s\S]*?)<\/p>/.exec(page.text);
  return m ? decodeEntities(m[1]!) : null;
}
