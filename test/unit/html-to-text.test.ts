import { describe, expect, test } from "bun:test";
import { htmlToText } from "../../src/text/html-to-text.ts";

describe("htmlToText (remote status HTML)", () => {
  test("paragraphs and line breaks survive, tags and their attributes do not", () => {
    expect(htmlToText('<p>Hello <a href="https://x.example/@bob" class="u-url mention">@<span>bob</span></a></p><p>line<br/>two<br>three</p>')).toBe("Hello @bob\n\nline\ntwo\nthree");
    expect(htmlToText('<p><script>alert(1)</script><img src=x onerror="alert(2)">hi</p>')).toBe("alert(1)hi");
  });

  test("Mastodon's shortened links come back whole", () => {
    expect(htmlToText('<a href="https://example.com/a/long/path"><span class="invisible">https://</span><span class="ellipsis">example.com/a/lon</span><span class="invisible">g/path</span></a>')).toBe(
      "https://example.com/a/long/path",
    );
  });

  test("entities are decoded once; what they spell stays text for the formatter to escape", () => {
    expect(htmlToText("&lt;b&gt;not bold&lt;/b&gt; &amp;amp; &#39;q&#39; &#x1F600; &quot;")).toBe("<b>not bold</b> &amp; 'q' 😀 \"");
    expect(htmlToText("bad &#xD800; &#0; &unknown;")).toBe("bad   &unknown;");
  });
});
