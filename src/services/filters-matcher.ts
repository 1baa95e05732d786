/**
 * Keyword matching for filters in time linear in the text, whatever the keywords: one
 * Aho–Corasick automaton over every keyword of an account, instead of a regular expression
 * per filter whose size (and compile time, on the one event loop) grew with the keywords.
 *
 * Semantics are those of the regular expression it replaces, Mastodon's: case-insensitive as
 * a JavaScript `/iu` regex is (simple case folding, code point by code point), a whole-word
 * keyword that starts (ends) with a word character must not be preceded (followed) by one, and
 * each filter reports its leftmost match, the earlier keyword winning at the same position.
 *
 * Word boundaries need no checks at match time: the text is read as a stream of folded code
 * points with a marker symbol wherever a word starts (BEGIN) and ends (END), keywords are
 * turned into the same stream, and a whole-word keyword simply includes the marker outside its
 * word-character ends. So every match the automaton reports is a real one.
 */

const BEGIN = 0x110000;
const END = 0x110001;

/** Lazily filled per code point: simple case fold + 1 (0 = not computed yet), and word class. */
const FOLDS = new Int32Array(0x110000);
const WORDS = new Uint8Array(0x110000);
const WORD_CLASS = /[\p{L}\p{N}_]/iu;

/** A code point's representative under `/iu` matching: equal for exactly the code points the regex treats as equal. */
export function foldCodePoint(cp: number): number {
  const known = FOLDS[cp] as number;
  if (known !== 0) return known - 1;
  const s = String.fromCodePoint(cp);
  let folded = cp;
  // Mostly the lowercase of the uppercase (ς, ſ, µ and Kelvin fold like their letters); checked
  // against the regex engine itself, which refuses the cases where that is wrong (ı is not i).
  for (const candidate of [s.toUpperCase().toLowerCase(), s.toLowerCase()]) {
    const c = candidate.codePointAt(0) as number;
    if (candidate.length !== (c > 0xffff ? 2 : 1)) continue;
    if (c === cp || new RegExp(`^\\u{${cp.toString(16)}}$`, "iu").test(candidate)) {
      folded = c;
      break;
    }
  }
  FOLDS[cp] = folded + 1;
  return folded;
}

/** A word character as the old `(?<![\p{L}\p{N}_])` lookarounds (with the `iu` flags) saw one. */
export function isWordCodePoint(cp: number): boolean {
  let known = WORDS[cp] as number;
  if (known === 0) {
    known = WORD_CLASS.test(String.fromCodePoint(cp)) ? 1 : 2;
    WORDS[cp] = known;
  }
  return known === 1;
}

/** A keyword as the automaton's symbols. */
function keywordSymbols(keyword: string, wholeWord: boolean): { symbols: number[]; codePoints: number } {
  const symbols: number[] = [];
  let previousWord = false;
  let first = true;
  let codePoints = 0;
  for (const ch of keyword) {
    const cp = ch.codePointAt(0) as number;
    const word = isWordCodePoint(cp);
    if (first) {
      if (wholeWord && word) symbols.push(BEGIN);
    } else if (previousWord && !word) symbols.push(END);
    else if (!previousWord && word) symbols.push(BEGIN);
    symbols.push(foldCodePoint(cp));
    previousWord = word;
    first = false;
    codePoints++;
  }
  if (wholeWord && previousWord && codePoints > 0) symbols.push(END);
  return { symbols, codePoints };
}

export interface MatcherKeyword {
  keyword: string;
  wholeWord: boolean;
}

/**
 * Work units (keyword symbols, automaton states) between two pauses of an incremental build:
 * a few milliseconds (see scripts/bench/filters.ts).
 */
export const BUILD_SLICE = 32_768;

/**
 * Output entries a match may visit per code point of text. Each visit is a real match, so
 * only a self-inflicted keyword set comes near it (hundreds of keywords that are suffixes of
 * one another, "a", "aa", "aaa"..., read against "aaaa..."): matching then stops there and
 * reports what it found so far, instead of holding the event loop.
 */
export const VISITS_PER_CODE_POINT = 32;

/**
 * Builds the automaton for keyword groups (one group per filter, keywords in their order), as
 * a generator that pauses every BUILD_SLICE units of work, so it can run in slices between
 * other requests, or all at once. Its return value is the matcher.
 */
export function* buildMatcher(groups: MatcherKeyword[][]): Generator<void, KeywordMatcher, void> {
  let work = 0;
  const patterns: { symbols: number[]; codePoints: number; group: number; order: number }[] = [];
  let total = 0;
  for (let g = 0; g < groups.length; g++) {
    const keywords = groups[g] as MatcherKeyword[];
    for (let k = 0; k < keywords.length; k++) {
      const { keyword, wholeWord } = keywords[k] as MatcherKeyword;
      const p = keywordSymbols(keyword, wholeWord);
      if (p.codePoints === 0) continue;
      patterns.push({ ...p, group: g, order: k });
      total += p.symbols.length;
      work += p.symbols.length;
      if (work >= BUILD_SLICE) {
        work = 0;
        yield;
      }
    }
  }

  const t = new Trie(total + 1, patterns.length, groups.length);
  for (const p of patterns) {
    t.insert(p.symbols, p.group, p.order, p.codePoints);
    work += p.symbols.length;
    if (work >= BUILD_SLICE) {
      work = 0;
      yield;
    }
  }
  for (const _ of t.link()) yield;
  return new KeywordMatcher(t, groups.length);
}

/** Runs a build to the end at once. */
export function finishBuild(build: Generator<void, KeywordMatcher, void>): KeywordMatcher {
  for (;;) {
    const step = build.next();
    if (step.done) return step.value;
  }
}

/**
 * The automaton in flat arrays. Nodes made while inserting one keyword are numbered in a row,
 * so a node's first child is usually the next node; only the first new node of a keyword can
 * branch off elsewhere, and those edges (at most one per keyword) go to a small hash table.
 */
class Trie {
  size = 1;
  readonly parent: Int32Array;
  readonly symbol: Int32Array;
  readonly fail: Int32Array;
  /** Nearest node on the failure chain that ends a keyword, or -1. */
  readonly dict: Int32Array;
  /** First output entry of a node that ends keywords, or -1. */
  readonly out: Int32Array;
  readonly depth: Uint16Array;
  private readonly edgeFrom: Int32Array;
  private readonly edgeSymbol: Int32Array;
  private readonly edgeTo: Int32Array;
  private readonly mask: number;
  entries = 0;
  readonly entryNext: Int32Array;
  readonly entryGroup: Int32Array;
  readonly entryOrder: Int32Array;
  readonly entryLength: Int32Array;
  /** Longest keyword of each group, in code points. */
  readonly longest: Int32Array;

  constructor(capacity: number, keywords: number, groups: number) {
    this.parent = new Int32Array(capacity).fill(-1);
    this.symbol = new Int32Array(capacity);
    this.fail = new Int32Array(capacity);
    this.dict = new Int32Array(capacity).fill(-1);
    this.out = new Int32Array(capacity).fill(-1);
    this.depth = new Uint16Array(capacity);
    let slots = 16;
    while (slots < keywords * 2) slots *= 2;
    this.mask = slots - 1;
    this.edgeFrom = new Int32Array(slots).fill(-1);
    this.edgeSymbol = new Int32Array(slots);
    this.edgeTo = new Int32Array(slots);
    this.entryNext = new Int32Array(keywords);
    this.entryGroup = new Int32Array(keywords);
    this.entryOrder = new Int32Array(keywords);
    this.entryLength = new Int32Array(keywords);
    this.longest = new Int32Array(groups);
  }

  private slot(node: number, symbol: number): number {
    return (Math.imul(node, 0x9e3779b1) ^ Math.imul(symbol, 0x85ebca77)) & this.mask;
  }

  child(node: number, symbol: number): number {
    const next = node + 1;
    if (next < this.size && this.parent[next] === node && this.symbol[next] === symbol) return next;
    for (let i = this.slot(node, symbol); ; i = (i + 1) & this.mask) {
      const from = this.edgeFrom[i] as number;
      if (from === -1) return -1;
      if (from === node && this.edgeSymbol[i] === symbol) return this.edgeTo[i] as number;
    }
  }

  insert(symbols: number[], group: number, order: number, codePoints: number) {
    let node = 0;
    for (const symbol of symbols) {
      const existing = this.child(node, symbol);
      if (existing !== -1) {
        node = existing;
        continue;
      }
      const created = this.size++;
      this.parent[created] = node;
      this.symbol[created] = symbol;
      this.depth[created] = (this.depth[node] as number) + 1;
      if (created !== node + 1) {
        let i = this.slot(node, symbol);
        while (this.edgeFrom[i] !== -1) i = (i + 1) & this.mask;
        this.edgeFrom[i] = node;
        this.edgeSymbol[i] = symbol;
        this.edgeTo[i] = created;
      }
      node = created;
    }
    // The same keyword again in a group: the earlier one is the one a regex alternation reports.
    for (let e = this.out[node] as number; e !== -1; e = this.entryNext[e] as number) if (this.entryGroup[e] === group) return;
    const e = this.entries++;
    this.entryGroup[e] = group;
    this.entryOrder[e] = order;
    this.entryLength[e] = codePoints;
    this.entryNext[e] = this.out[node] as number;
    this.out[node] = e;
    if (codePoints > (this.longest[group] as number)) this.longest[group] = codePoints;
  }

  /** Failure and dictionary links, breadth first (nodes counted out by depth); pauses like the build. */
  *link(): Generator<void, void, void> {
    let maxDepth = 0;
    for (let n = 0; n < this.size; n++) maxDepth = Math.max(maxDepth, this.depth[n] as number);
    const starts = new Int32Array(maxDepth + 2);
    for (let n = 1; n < this.size; n++) starts[(this.depth[n] as number) + 1]!++;
    for (let d = 1; d <= maxDepth + 1; d++) starts[d]! += starts[d - 1] as number;
    const order = new Int32Array(this.size);
    for (let n = 1; n < this.size; n++) order[starts[this.depth[n] as number]!++] = n;
    let work = 0;
    for (let i = 0; i < this.size - 1; i++) {
      const n = order[i] as number;
      const p = this.parent[n] as number;
      const symbol = this.symbol[n] as number;
      let f = 0;
      if (p !== 0) {
        for (let g = this.fail[p] as number; ; g = this.fail[g] as number) {
          work++;
          const c = this.child(g, symbol);
          if (c !== -1) {
            f = c;
            break;
          }
          if (g === 0) break;
        }
      }
      this.fail[n] = f;
      this.dict[n] = this.out[f] !== -1 ? f : (this.dict[f] as number);
      if (++work >= BUILD_SLICE) {
        work = 0;
        yield;
      }
    }
  }
}

/** Reused between calls (one thread): UTF-16 offset of each code point of the text. */
let offsets = new Int32Array(1024);

export class KeywordMatcher {
  /** Output entries the last `match` visited (its work beyond one step per symbol). */
  visits = 0;

  constructor(
    private t: Trie,
    private groups: number,
  ) {}

  /** States of the automaton: what its memory and build time grow with. */
  get states(): number {
    return this.t.size;
  }

  /**
   * For each group, the text of its leftmost match in `text` (the earlier keyword at the same
   * position), or undefined. Groups whose `active` entry is false are skipped.
   */
  match(text: string, active: readonly boolean[]): (string | undefined)[] {
    const t = this.t;
    const groups = this.groups;
    const bestStart = new Array<number>(groups).fill(-1);
    const bestEnd = new Array<number>(groups).fill(-1);
    const bestOrder = new Array<number>(groups).fill(0);
    let unmatched = 0;
    for (let g = 0; g < groups; g++) if (active[g] && (t.longest[g] as number) > 0) unmatched++;
    const result = new Array<string | undefined>(groups).fill(undefined);
    this.visits = 0;
    if (unmatched === 0 || text.length === 0) return result;
    if (offsets.length < text.length + 1) offsets = new Int32Array(text.length + 1);

    let budget = 1024 + VISITS_PER_CODE_POINT * text.length;
    let state = 0;
    let index = -1;
    let stopAfter = Infinity;
    let previousWord = false;

    const step = (symbol: number) => {
      for (;;) {
        const c = t.child(state, symbol);
        if (c !== -1) {
          state = c;
          return;
        }
        if (state === 0) return;
        state = t.fail[state] as number;
      }
    };
    const report = () => {
      for (let o = t.out[state] !== -1 ? state : (t.dict[state] as number); o !== -1 && budget > 0; o = t.dict[o] as number) {
        for (let e = t.out[o] as number; e !== -1; e = t.entryNext[e] as number) {
          budget--;
          const g = t.entryGroup[e] as number;
          if (!active[g]) continue;
          const start = index - (t.entryLength[e] as number) + 1;
          const order = t.entryOrder[e] as number;
          const best = bestStart[g] as number;
          if (best === -1 || start < best || (start === best && order < (bestOrder[g] as number))) {
            if (best === -1) unmatched--;
            bestStart[g] = start;
            bestEnd[g] = index;
            bestOrder[g] = order;
          }
        }
      }
      // Once every group has a match, none can move left after its longest keyword has passed.
      if (unmatched === 0 && stopAfter === Infinity) {
        stopAfter = 0;
        for (let g = 0; g < groups; g++) if (bestStart[g] !== -1) stopAfter = Math.max(stopAfter, (bestStart[g] as number) + (t.longest[g] as number) - 1);
      }
    };

    let i = 0;
    let stopped = false;
    while (i < text.length) {
      const cp = text.codePointAt(i) as number;
      const word = isWordCodePoint(cp);
      if (previousWord && !word) {
        step(END);
        report();
      } else if (!previousWord && word) step(BEGIN);
      if (index >= stopAfter || budget <= 0) {
        stopped = true;
        break;
      }
      offsets[++index] = i;
      step(foldCodePoint(cp));
      if (t.out[state] !== -1 || t.dict[state] !== -1) report();
      previousWord = word;
      i += cp > 0xffff ? 2 : 1;
    }
    offsets[index + 1] = i;
    if (!stopped && previousWord) {
      step(END);
      report();
    }
    this.visits = 1024 + VISITS_PER_CODE_POINT * text.length - budget;
    for (let g = 0; g < groups; g++) {
      const start = bestStart[g] as number;
      if (start !== -1) result[g] = text.slice(offsets[start], offsets[(bestEnd[g] as number) + 1]);
    }
    return result;
  }
}
