import { describe, expect, test } from "bun:test";
import { BUILD_SLICE, buildMatcher, finishBuild, foldCodePoint, VISITS_PER_CODE_POINT, type MatcherKeyword } from "../../src/services/filters-matcher.ts";
import { MAX_KEYWORD_CHARACTERS_PER_ACCOUNT, MAX_KEYWORDS_PER_ACCOUNT, MAX_KEYWORDS_PER_FILTER } from "../../src/services/filters.ts";

/**
 * The single RegExp per filter that the automaton replaced (Mastodon's keyword regex, in
 * JavaScript), except that a keyword's ends are read as code points, as Mastodon's
 * `[[:word:]]` reads them (the old code looked at UTF-16 units, so "é𝐀" had no end boundary).
 */
function regexMatch(keywords: MatcherKeyword[], text: string): string | undefined {
  if (keywords.length === 0) return undefined;
  const WORD = /[\p{L}\p{N}_]/iu;
  const pattern = keywords.map(({ keyword, wholeWord }) => {
    const chars = [...keyword];
    const start = wholeWord && WORD.test(chars[0] ?? "") ? "(?<![\\p{L}\\p{N}_])" : "";
    const end = wholeWord && WORD.test(chars.at(-1) ?? "") ? "(?![\\p{L}\\p{N}_])" : "";
    return `${start}${keyword.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}${end}`;
  });
  return new RegExp(pattern.join("|"), "iu").exec(text)?.[0];
}

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  return (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
}

describe("keyword automaton", () => {
  test("reports what the per-filter RegExp reported, on random keywords and texts", () => {
    const pieces = ["a", "b", "A", "ab", " ", "-", ".", "*", "(", "$", "\\", "_", "1", "é", "É", "ß", "ẞ", "ı", "I", "i", "ς", "Σ", "σ", "😀", "𝐀", "K", "k", "\u212a", "日本"];
    const rnd = random(12);
    const text = (n: number) => Array.from({ length: n }, () => pieces[rnd(pieces.length)]).join("");
    let compared = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const groups = Array.from({ length: 1 + rnd(5) }, () => Array.from({ length: rnd(8) }, () => ({ keyword: text(1 + rnd(4)), wholeWord: rnd(2) === 0 })));
      const matcher = finishBuild(buildMatcher(groups));
      for (let t = 0; t < 5; t++) {
        const subject = text(rnd(60));
        expect({ groups, subject, got: matcher.match(subject, groups.map(() => true)) }).toEqual({ groups, subject, got: groups.map((g) => regexMatch(g, subject)) });
        compared++;
      }
    }
    expect(compared).toBe(15_000);
  });

  test("inactive (expired) groups are skipped; the same keyword in two groups matches both", () => {
    const matcher = finishBuild(buildMatcher([[{ keyword: "rook", wholeWord: true }], [{ keyword: "ROOK", wholeWord: false }], []]));
    expect(matcher.match("A Rook.", [true, true, true])).toEqual(["Rook", "Rook", undefined]);
    expect(matcher.match("A Rook.", [false, true, true])).toEqual([undefined, "Rook", undefined]);
    expect(matcher.match("Rookery", [true, true, true])).toEqual([undefined, "Rook", undefined]);
  });

  test("a whole word's ends are code points: an astral letter at the end needs a boundary", () => {
    const matcher = finishBuild(buildMatcher([[{ keyword: "é𝐀", wholeWord: true }]]));
    expect(matcher.match("É𝐀K", [true])).toEqual([undefined]);
    expect(matcher.match("(É𝐀) k", [true])).toEqual(["É𝐀"]);
  });

  test("case folding treats as equal exactly what /iu does", () => {
    const same = (a: number, b: number) => new RegExp(`^\\u{${a.toString(16)}}$`, "iu").test(String.fromCodePoint(b));
    let checked = 0;
    for (let cp = 0; cp < 0x20000; cp++) {
      const s = String.fromCodePoint(cp);
      const others = [s.toLowerCase(), s.toUpperCase(), s.toUpperCase().toLowerCase()].filter((o) => o !== s && [...o].length === 1).map((o) => o.codePointAt(0) as number);
      if (others.length === 0) continue;
      const folded = foldCodePoint(cp);
      expect(same(cp, folded)).toBe(true);
      expect(foldCodePoint(folded)).toBe(folded);
      for (const other of others) {
        if (same(cp, other) !== (foldCodePoint(other) === folded)) throw new Error(`U+${cp.toString(16)} and U+${other.toString(16)} disagree`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(2500);
  });

  test("the build at the caps is bounded work done in slices", () => {
    const rnd = random(7);
    // The worst case: as many characters as allowed, in as many keywords, sharing nothing.
    const perGroup = MAX_KEYWORDS_PER_FILTER;
    const size = MAX_KEYWORD_CHARACTERS_PER_ACCOUNT / MAX_KEYWORDS_PER_ACCOUNT;
    const groups = Array.from({ length: MAX_KEYWORDS_PER_ACCOUNT / perGroup }, () =>
      Array.from({ length: perGroup }, () => ({ keyword: Array.from({ length: size }, () => String.fromCharCode(97 + rnd(26))).join(""), wholeWord: true })),
    );
    const build = buildMatcher(groups);
    let pauses = 0;
    let step = build.next();
    for (; !step.done; step = build.next()) pauses++;
    const matcher = step.value;
    // One state per symbol at most: the characters, and two word markers a keyword.
    const bound = 1 + MAX_KEYWORD_CHARACTERS_PER_ACCOUNT + 2 * MAX_KEYWORDS_PER_ACCOUNT;
    expect(matcher.states).toBeLessThanOrEqual(bound);
    expect(matcher.states).toBeGreaterThan(bound / 2);
    // It pauses every BUILD_SLICE units: keyword symbols twice, then each state's links.
    expect(pauses).toBeGreaterThanOrEqual(Math.floor((2 * (matcher.states - 1)) / BUILD_SLICE));
    expect(pauses).toBeLessThanOrEqual(Math.ceil((4 * bound) / BUILD_SLICE) + 3);
    const word = groups[1]![5]!.keyword;
    expect(matcher.match(`so ${word.toUpperCase()}!`, [true, true])).toEqual([undefined, word.toUpperCase()]);
  });

  test("matching visits a bounded number of outputs, even for keywords nested as suffixes", () => {
    const groups = Array.from({ length: 4 }, (_, g) => Array.from({ length: 500 }, (_, i) => ({ keyword: "a".repeat(i + 1 + g), wholeWord: false })));
    const matcher = finishBuild(buildMatcher(groups));
    const text = "b" + "a".repeat(5000);
    const found = matcher.match(text, [true, true, true, true]);
    expect(matcher.visits).toBeLessThanOrEqual(1024 + VISITS_PER_CODE_POINT * text.length + groups.length);
    // Each group still reports a match where the text begins to hold its keywords.
    expect(found.every((m) => m !== undefined && /^a+$/.test(m))).toBe(true);
    // An ordinary text costs about one visit per match.
    matcher.match("a plain sentence", [true, true, true, true]);
    expect(matcher.visits).toBeLessThan(10);
  });
});
