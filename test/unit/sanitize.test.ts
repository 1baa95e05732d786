import { describe, expect, test } from "bun:test";
import { sanitizeRemoteHtml as clean } from "../../src/text/sanitize.ts";

const REL = 'rel="nofollow noopener" target="_blank"';

describe("sanitizeRemoteHtml (Mastodon's MASTODON_STRICT)", () => {
  test("Mastodon-shaped mentions, hashtags and shortened links come through intact, links opened safely", () => {
    expect(clean('<p><span class="h-card"><a href="https://x/@bob" class="u-url mention">@<span>bob</span></a></span> hi</p>')).toBe(
      `<p><span class="h-card"><a href="https://x/@bob" class="u-url mention" ${REL}>@<span>bob</span></a></span> hi</p>`,
    );
    // rel is Mastodon's, whatever the sender said (rel="tag" included, as Mastodon does).
    expect(clean('<a href="https://x/tags/t" class="mention hashtag" rel="tag">#<span>t</span></a>')).toBe(
      `<a href="https://x/tags/t" class="mention hashtag" rel="tag nofollow noopener" target="_blank">#<span>t</span></a>`,
    );
    const shortened =
      '<a href="https://example.com/a/long/path"><span class="invisible">https://</span><span class="ellipsis">example.com/a/lon</span><span class="invisible">g/path</span></a>';
    expect(clean(shortened)).toBe(shortened.replace('path">', `path" ${REL}>`));
    expect(clean('<a href="https://x" target="_self" rel="opener">t</a>')).toBe(`<a href="https://x" target="_blank" rel="nofollow noopener">t</a>`);
  });

  test("the formatting Mastodon allows stays, with only its attributes", () => {
    const kept =
      '<p>a<br />b</p><pre><code>x</code></pre><blockquote>q</blockquote><b>b</b><strong>s</strong><u>u</u><i>i</i><em>e</em><del>d</del><s>s</s><sub>1</sub><sup>2</sup><abbr title="t">ab</abbr><h1>h</h1><h5>h5</h5><ul><li>1</li></ul>';
    expect(clean(kept)).toBe(kept);
    expect(clean('<p>Check out:</p><ol start="3" reversed=""><li value="4">Foo</li></ol>')).toBe(
      '<p>Check out:</p><ol start="3" reversed=""><li value="4">Foo</li></ol>',
    );
    expect(clean("<p><ruby>明日 <rp>(</rp><rt>Ashita</rt><rp>)</rp></ruby></p>")).toBe("<p><ruby>明日 <rp>(</rp><rt>Ashita</rt><rp>)</rp></ruby></p>");
    expect(clean('<p lang="fr" id="x" title="t">bonjour</p>')).toBe('<p lang="fr">bonjour</p>');
    expect(clean('<a href="http://example.com" translate="no">T</a><span translate="yes">s</span>')).toBe(
      `<a href="http://example.com" translate="no" ${REL}>T</a><span>s</span>`,
    );
    expect(clean('<blockquote cite="https://ok.example/">q</blockquote><blockquote cite="javascript:alert(1)">q</blockquote>')).toBe(
      '<blockquote cite="https://ok.example/">q</blockquote><blockquote>q</blockquote>',
    );
  });

  test("only the microformat, mention, hashtag and link-formatting classes survive", () => {
    expect(clean('<span class="foo h-card bar mention p-name dt-published e-content u-photo">s</span>')).toBe(
      '<span class="h-card mention p-name dt-published e-content u-photo">s</span>',
    );
    expect(clean('<p class="quote-inline status">q</p><span class="hidden">x</span><b class="h-card">b</b>')).toBe('<p class="quote-inline">q</p><span>x</span><b>b</b>');
  });

  test("scripts, styles, frames and other non-text elements go with their content", () => {
    expect(clean("<p>Hello <script>alert(1)</script>world</p>")).toBe("<p>Hello world</p>");
    expect(clean("<style>body{display:none}</style>s<SCRIPT SRC=//x.example/a.js></SCRIPT>")).toBe("s");
    expect(clean('<iframe src="https://evil.example"><p>inside</p></iframe>after')).toBe("after");
    expect(clean("<svg><script>alert(1)</script><a href='https://x'>l</a></svg>ok")).toBe("ok");
    expect(clean("<math><mi>x</mi></math>m<noscript><p>n</p></noscript><textarea><b>t</b></textarea>")).toBe("m");
    expect(clean('<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>')).toBe("");
  });

  test("event handlers, style and every other attribute are dropped", () => {
    expect(clean('<p style="color:red" onclick="x()" class="e-content" data-x="1">styled</p>')).toBe('<p class="e-content">styled</p>');
    expect(clean('<a href="https://x" onmouseover="alert(1)" style="position:fixed">t</a>')).toBe(`<a href="https://x" ${REL}>t</a>`);
    expect(clean('<span onerror="alert(1)" class="invisible">x</span>')).toBe('<span class="invisible">x</span>');
  });

  test("a link without an http(s) or other Mastodon link protocol becomes its bare text", () => {
    for (const href of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      "java&#x09;script:alert(1)",
      "javascript&#58;alert(1)",
      "&#106;avascript:alert(1)",
      " javascript:alert(1)",
      "vbscript:msgbox(1)",
      "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
      "/relative/path",
      "//evil.example/x",
      " https://google.fr",
      "foo://bar",
      "",
    ]) {
      expect(clean(`<a href="${href}"><b>click</b> <span class="invisible">me</span></a>`)).toBe("click me");
    }
    expect(clean("<a>Test</a>")).toBe("Test");
    // The text stays text: escaped markup in it is not read again as markup.
    expect(clean('<a href="foo://bar">Test&lt;a href="https://example.com"&gt;test&lt;/a&gt;</a>')).toBe('Test&lt;a href="https://example.com"&gt;test&lt;/a&gt;');
    expect(clean('<a href="javascript:x">t</a><b>after</b>')).toBe("t<b>after</b>");
  });

  test("the other protocols Mastodon links to are kept", () => {
    for (const href of ["dweb:/a/foo", "ipfs://bafy/x", "gemini://g.example/", "xmpp:a@b.example", "magnet:?xt=urn:btih:x", "HTTPS://X.EXAMPLE/"]) {
      expect(clean(`<a href="${href}">T</a>`)).toBe(`<a href="${href}" ${REL}>T</a>`);
    }
  });

  test("with httpLinksOnly (a profile's field values) only http(s) links stay, the others become their text", () => {
    expect(clean('<a href="https://carol.example/">site</a>', { httpLinksOnly: true })).toBe(`<a href="https://carol.example/" ${REL}>site</a>`);
    expect(clean('<a href="HTTP://carol.example/">site</a>', { httpLinksOnly: true })).toBe(`<a href="HTTP://carol.example/" ${REL}>site</a>`);
    for (const href of ["gemini://g.example/", "xmpp:a@b.example", "magnet:?xt=urn:btih:x", "javascript:alert(1)", "data:text/html,x"]) {
      expect(clean(`<a href="${href}"><b>T</b></a>`, { httpLinksOnly: true })).toBe("T");
    }
    expect(clean('<img src="ipfs://bafy/x" alt="pic">', { httpLinksOnly: true })).toBe("[🖼  pic]");
    expect(clean('<blockquote cite="gopher://g.example/">q</blockquote>', { httpLinksOnly: true })).toBe("<blockquote>q</blockquote>");
  });

  test("images become links to them, as Mastodon shows them; unsafe sources only text", () => {
    expect(clean('<img src="https://example.com/cat.png" alt="a cat">')).toBe(`<a href="https://example.com/cat.png" ${REL}>[🖼  a cat]</a>`);
    expect(clean('<img src="https://www.example.com/a/very/long/path/to/the/picture.png">')).toBe(
      `<a href="https://www.example.com/a/very/long/path/to/the/picture.png" ${REL}>[🖼  example.com/a/very/long/path/t…]</a>`,
    );
    expect(clean('<img src="x" onerror="alert(1)">')).toBe("[🖼  x]");
    expect(clean('<img src="data:image/png;base64,AAAA" alt="d">')).toBe("[🖼  d]");
  });

  test("other elements are unwrapped; block ones leave a space between words", () => {
    expect(clean("<div>a</div><div>b</div>")).toBe(" a  b ");
    expect(clean("<h6>six</h6><font color=red>f</font><marquee>m</marquee>")).toBe(" six fm");
    expect(clean('<form action="https://x"><input value="v"><button>go</button></form>')).toBe("go");
  });

  test("malformed and nested markup comes out balanced", () => {
    expect(clean("<b><i>unclosed")).toBe("<b><i>unclosed</i></b>");
    expect(clean("</b>stray<p>x</div>")).toBe("stray<p>x</p>");
    expect(clean('<a href="https://a"><a href="javascript:x">inner</a></a>')).toBe(`<a href="https://a" ${REL}></a>inner`);
    expect(clean('<a href="javascript:x"><a href="https://a">inner</a> tail</a>')).toBe(`<a href="https://a" ${REL}>inner</a> tail`);
    expect(clean('<p <script>x</p>')).not.toContain("<script");
    expect(clean('<a href="https://x"title="t"onclick=alert(1)>y</a>')).toBe(`<a href="https://x" title="t" ${REL}>y</a>`);
    const deep = clean("<b>".repeat(500) + "deep");
    expect(deep).toContain("deep");
    expect(deep.match(/<b>/g)!.length).toBe(deep.match(/<\/b>/g)!.length);
  });

  test("entities are decoded and escaped again; comments and CDATA go", () => {
    expect(clean("<p>a &amp; b &lt;script&gt; &quot;q&quot; &#x1F600; &#39;</p>")).toBe("<p>a &amp; b &lt;script&gt; \"q\" 😀 '</p>");
    expect(clean("<p>1 < 2 > 0 & x</p>")).toBe("<p>1 &lt; 2 &gt; 0 &amp; x</p>");
    expect(clean('<a href="https://x/?a=1&amp;b=&quot;2">q</a>')).toBe(`<a href="https://x/?a=1&amp;b=&quot;2" ${REL}>q</a>`);
    expect(clean("<!-- <script>alert(1)</script> -->c<![CDATA[<script>]]>")).toBe("c");
  });

  test("our own marker names in the input are nothing special", () => {
    expect(clean('<rookery-gap class="x">g</rookery-gap><rookery-strip onclick="x">s</rookery-strip>')).toBe(" g s");
  });

  test("plain text and the empty string", () => {
    expect(clean("")).toBe("");
    expect(clean("just text")).toBe("just text");
  });
});
