import { describe, expect, test } from "bun:test";
import { countableLength, formatText, normalizeTag } from "../../src/text/format.ts";

const options = {
  tagBaseUrl: "https://social.example/tags/",
  resolveMention: (username: string, domain: string | null) =>
    username.toLowerCase() === "alice" && (domain === null || domain === "social.example")
      ? { id: 1, username: "alice", url: "https://social.example/@alice" }
      : null,
};

describe("text to HTML", () => {
  test("escapes everything the user wrote", () => {
    expect(formatText(`<script>alert("x")</script> & 'q'`, options).html).toBe(
      "<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;</p>",
    );
  });

  test("paragraphs and line breaks as simple_format", () => {
    expect(formatText("a\nb\n\nc", options).html).toBe("<p>a<br />b</p><p>c</p>");
    expect(formatText("a\r\nb", options).html).toBe("<p>a<br />b</p>");
    expect(formatText("  ", options).html).toBe("");
  });

  test("links with scheme only, shortened display", () => {
    const html = formatText("go to https://www.example.com/a/very/long/path/indeed/yes/more and example.org", options).html;
    expect(html).toContain('<a href="https://www.example.com/a/very/long/path/indeed/yes/more" target="_blank" rel="nofollow noopener noreferrer" translate="no">');
    expect(html).toContain('<span class="invisible">https://www.</span><span class="ellipsis">example.com/a/very/long/path/i</span>');
    expect(html).toContain("and example.org</p>");
    expect(formatText("javascript:alert(1)", options).html).toBe("<p>javascript:alert(1)</p>");
  });

  test("mentions of known accounts and hashtags", () => {
    const f = formatText("hey @alice and @nobody #Café #x1 me@alice.example", options);
    expect(f.html).toContain('<span class="h-card" translate="no"><a href="https://social.example/@alice" class="u-url mention">@<span>alice</span></a></span>');
    expect(f.html).toContain("@nobody");
    expect(f.html).toContain('<a href="https://social.example/tags/Caf%C3%A9" class="mention hashtag" rel="tag">#<span>Café</span></a>');
    expect(f.mentions.map((m) => m.id)).toEqual([1]);
    expect(f.tags).toEqual(["Café", "x1"]);
    expect(f.html).toContain("me@alice.example");
  });

  test("a mention may carry the server's port after its domain", () => {
    const withPort = {
      ...options,
      resolveMention: (username: string, domain: string | null) =>
        username === "alice" && (domain === null || domain === "localhost:3000") ? { id: 1, username: "alice", url: "http://localhost:3000/@alice" } : null,
    };
    const f = formatText("hi @alice@localhost:3000: and @alice@localhost:30001 and @alice@localhost", withPort);
    expect(f.mentions.map((m) => m.id)).toEqual([1]);
    expect(f.html).toBe(
      '<p>hi <span class="h-card" translate="no"><a href="http://localhost:3000/@alice" class="u-url mention">@<span>alice</span></a></span>: and @alice@localhost:30001 and @alice@localhost</p>',
    );
    expect(countableLength("@alice@localhost:3000")).toBe(6);
  });

  test("length counts URLs as 23 and remote mentions by username", () => {
    expect(countableLength("a".repeat(10))).toBe(10);
    expect(countableLength(`x https://example.com/${"a".repeat(100)}`)).toBe(2 + 23);
    expect(countableLength("@bob@far.away.example")).toBe(4);
    expect(countableLength("👩‍👩‍👧")).toBe(1);
  });

  test("tag names normalise as Mastodon's", () => {
    expect(normalizeTag("Café")).toBe("cafe");
    expect(normalizeTag("ＦＯＯ")).toBe("foo");
  });
});

describe("hostile input", () => {
  test("long runs of tag separators are processed in linear time", () => {
    // CPU time of this process, not wall-clock time: other processes keeping the cores busy
    // slow the clock on the wall, not the work done (a quadratic pass would take minutes).
    const started = process.cpuUsage();
    const text = "#a" + "\u200c".repeat(50_000);
    formatText(text, options);
    countableLength(text);
    const used = process.cpuUsage(started);
    expect((used.user + used.system) / 1000).toBeLessThan(500);
  });

  test("hashtag edge cases match Mastodon's rules", () => {
    expect(formatText("#foo_bar #foo· #·foo #123 #1_2 #x", options).tags).toEqual(["foo_bar", "foo", "1_2", "x"]);
  });
});
