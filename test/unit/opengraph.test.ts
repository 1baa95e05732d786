import { describe, expect, test } from "bun:test";
import { firstLink } from "../../src/services/statuses/link-cards.ts";
import { summarize } from "../../src/text/opengraph.ts";

const page = (head: string) => new TextEncoder().encode(`<!DOCTYPE html><html><head>${head}</head><body><meta property="og:title" content="from the body"></body></html>`);

describe("summarize (a page's OpenGraph for link previews)", () => {
  test("og:* first, then twitter:*, then <title> and the description meta; entities decoded; only the head is read", () => {
    expect(summarize(page(`<meta name="twitter:title" content="T &quot;quoted&quot;"><title>Plain</title>`), "https://a.example/x").title).toBe('T "quoted"');
    expect(summarize(page(`<title>  Spaced
      title </title>`), "https://a.example/x").title).toBe("Spaced title");
    expect(summarize(page(""), "https://a.example/x").title).toBe("");
  });

  test("image URLs are made absolute and only http(s) ones kept; sizes are bounded numbers", () => {
    const base = "https://a.example/posts/1";
    expect(summarize(page(`<meta property="og:image" content="../img/a.png">`), base).image).toBe("https://a.example/img/a.png");
    expect(summarize(page(`<meta property="og:image" content="javascript:alert(1)">`), base).image).toBeNull();
    expect(summarize(page(`<meta property="og:image" content="data:image/png;base64,AAAA">`), base).image).toBeNull();
    expect(summarize(page(`<meta property="og:image" content="https://a.example@evil.example/x.png">`), base).image).toBeNull();
    expect(summarize(page(""), base).image).toBeNull();
    const sized = summarize(page(`<meta property="og:image" content="/a.png"><meta property="og:image:width" content="99999999"><meta property="og:image:height" content="-5">`), base);
    expect([sized.imageWidth, sized.imageHeight]).toEqual([100000, 0]);
  });
});

describe("firstLink (which link of a status gets the card)", () => {
  test("the first http(s) link that is neither a mention nor a hashtag", () => {
    const html = `<p><span class="h-card"><a href="https://x.example/@bob" class="u-url mention">@<span>bob</span></a></span> <a href="https://x.example/tags/moss" class="mention hashtag" rel="tag">#<span>moss</span></a> <a href="https://moss.example/a?b=1&amp;c=2" rel="nofollow noopener" target="_blank">moss.example/a</a> <a href="https://second.example/">second</a></p>`;
    expect(firstLink(html)).toBe("https://moss.example/a?b=1&c=2");
    expect(firstLink(`<p><a href="ftp://x.example/">ftp</a> no web link</p>`)).toBeNull();
    expect(firstLink(`<p><a href="javascript:alert(1)">js</a> <a href="https://x.example@evil.example/">tricky</a> <a href="https://fine.example/">fine</a></p>`)).toBe("https://fine.example/");
    expect(firstLink("<p>no links at all</p>")).toBeNull();
  });
});
