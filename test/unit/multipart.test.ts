import { describe, expect, test } from "bun:test";
import { boundaryOf, MultipartError, MultipartParser, type MultipartEvent } from "../../src/http/multipart.ts";

// The streaming multipart parser on its own: whatever the chunks' edges, it reads what Bun's
// own (whole-body) FormData reads, and refuses what is not multipart.

const enc = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s);

interface Parsed {
  name: string | null;
  filename: string | null;
  contentType: string | null;
  bytes: Uint8Array;
}

/** Feeds `body` in the chunks given by `cuts` (offsets), collecting whole parts. */
function parse(boundary: string, body: Uint8Array, cuts: number[] = []): Parsed[] {
  const parser = new MultipartParser(boundary);
  const parts: Parsed[] = [];
  let current: { head: MultipartEvent & { type: "part" }; chunks: Uint8Array[] } | null = null;
  const take = (events: MultipartEvent[]) => {
    for (const event of events) {
      if (event.type === "part") current = { head: event, chunks: [] };
      // Copied at once: a data event is a view that holds only until the next push.
      else if (event.type === "data") current!.chunks.push(event.bytes.slice());
      else {
        const { head, chunks } = current!;
        parts.push({ name: head.name, filename: head.filename, contentType: head.contentType, bytes: new Uint8Array(Buffer.concat(chunks)) });
        current = null;
      }
    }
  };
  let at = 0;
  for (const cut of [...cuts, body.length]) {
    take(parser.push(body.subarray(at, cut)));
    at = cut;
  }
  parser.end();
  return parts;
}

async function encoded(form: FormData): Promise<{ body: Uint8Array; boundary: string }> {
  const request = new Request("http://localhost/", { method: "POST", body: form });
  // Read before the body: Bun's header, made from the body, is gone once the body is.
  const boundary = boundaryOf(request.headers.get("content-type")!)!;
  return { body: new Uint8Array(await request.arrayBuffer()), boundary };
}

/** A file whose bytes look like the framing: line ends, dashes, and the start of the boundary. */
function tricky(boundary: string): Uint8Array<ArrayBuffer> {
  return enc(`\r\n--\r\n--${boundary.slice(0, -1)}\r\n\r\n-${boundary}x\r\n--`);
}

describe("MultipartParser", () => {
  test("reads what Bun's FormData reads, cut at every byte and in random chunks", async () => {
    const form = new FormData();
    form.append("description", "a line\r\nand another, ünïcödé 🐦");
    form.append("media_ids[]", "1");
    form.append("media_ids[]", "2");
    form.append("empty", "");
    form.append("file", new File([new Uint8Array([0, 255, 13, 10, 45, 45, 0])], "a b.png", { type: "image/png" }));
    const { body, boundary } = await encoded(form);
    form.append("trap", new File([tricky(boundary)], "trap.bin"));
    const full = await encoded(form);
    const expected = await new Response(full.body as Uint8Array<ArrayBuffer>, { headers: { "content-type": `multipart/form-data; boundary=${full.boundary}` } }).formData();
    const want = await Promise.all(
      [...(expected.entries() as Iterable<[string, string | File]>)].map(async ([name, v]) =>
        typeof v === "string"
          ? { name, filename: null, text: v }
          : { name, filename: v.name, bytes: [...new Uint8Array(await v.arrayBuffer())] },
      ),
    );
    const shape = (parts: Parsed[]) =>
      parts.map((p) => (p.filename === null ? { name: p.name, filename: null, text: new TextDecoder().decode(p.bytes) } : { name: p.name, filename: p.filename, bytes: [...p.bytes] }));
    expect(want.length).toBe(6);
    expect(shape(parse(full.boundary, full.body))).toEqual(want);
    const everyByte = Array.from({ length: full.body.length - 1 }, (_, i) => i + 1);
    expect(shape(parse(full.boundary, full.body, everyByte))).toEqual(want);
    for (let round = 0; round < 50; round++) {
      const cuts = [...new Set(Array.from({ length: 1 + (round % 7) }, () => Math.floor(Math.random() * full.body.length)))].sort((a, b) => a - b);
      expect(shape(parse(full.boundary, full.body, cuts))).toEqual(want);
    }
    expect(body.length).toBeLessThan(full.body.length);
  });

  test("every boundary cut between two chunks at every offset", () => {
    const boundary = "b0und4ry";
    const body = enc(`--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\nxy\r\n--${boundary}\r\nContent-Disposition: form-data; name="b"\r\n\r\nz\r\n--${boundary}--\r\n`);
    for (let cut = 0; cut <= body.length; cut++) {
      const parts = parse(boundary, body, [cut]);
      expect(parts.map((p) => [p.name, new TextDecoder().decode(p.bytes)])).toEqual([
        ["a", "xy"],
        ["b", "z"],
      ]);
    }
  });

  test("the part's headers: quoted names with escapes, filename*, the type, a part without headers, preamble, padding and epilogue", () => {
    const b = "XyZ";
    const body = enc(
      "a preamble to ignore\r\n" +
        `--${b}  \t\r\n` +
        'Content-Disposition: form-data; name="we \\"quote\\"";filename="x.png" ; filename*=UTF-8\'\'%C3%A9t%C3%A9.png\r\ncontent-type: image/png\r\nX-Other: 1\r\n\r\nPNG' +
        `\r\n--${b}\r\n` +
        "\r\nno headers" +
        `\r\n--${b}\r\n` +
        "Content-Disposition: attachment; name=\"not-a-field\"\r\n\r\nskipped" +
        `\r\n--${b}\r\n` +
        "Content-Disposition: form-data; name=plain\r\n\r\nunquoted" +
        `\r\n--${b}--\r\nan epilogue, also ignored\r\n--${b}\r\n`,
    );
    const parts = parse(b, body);
    expect(parts.map((p) => ({ ...p, bytes: new TextDecoder().decode(p.bytes) }))).toEqual([
      { name: 'we "quote"', filename: "été.png", contentType: "image/png", bytes: "PNG" },
      { name: null, filename: null, contentType: null, bytes: "no headers" },
      { name: null, filename: null, contentType: null, bytes: "skipped" },
      { name: "plain", filename: null, contentType: null, bytes: "unquoted" },
    ]);
  });

  test("an empty form is its closing boundary alone", () => {
    expect(parse("e", enc("--e--\r\n"))).toEqual([]);
    expect(parse("e", enc("--e--"))).toEqual([]);
  });

  test("what is not a whole multipart body is refused", () => {
    const b = "q";
    const cases: Record<string, string> = {
      "no closing boundary": `--${b}\r\nContent-Disposition: form-data; name="a"\r\n\r\nbroken`,
      "cut inside the headers": `--${b}\r\nContent-Disposition: form-da`,
      "no boundary at all": "just text",
      "empty": "",
      "text after a boundary": `--${b}junk\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--${b}--`,
      "headers that never end": `--${b}\r\nX: ${"h".repeat(20_000)}`,
      "a boundary line that never ends": `--${b}${" ".repeat(300)}`,
    };
    for (const [what, text] of Object.entries(cases)) {
      expect(() => parse(b, enc(text)), what).toThrow(MultipartError);
    }
  });
});

describe("boundaryOf", () => {
  test("quoted or not, anywhere among the parameters; none, or longer than RFC 2046 allows, is null", () => {
    expect(boundaryOf("multipart/form-data; boundary=----abc123")).toBe("----abc123");
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b;c"')).toBe("a b;c");
    expect(boundaryOf("multipart/form-data;BOUNDARY=x")).toBe("x");
    expect(boundaryOf("multipart/form-data")).toBeNull();
    expect(boundaryOf("multipart/form-data; boundary=")).toBeNull();
    expect(boundaryOf(`multipart/form-data; boundary=${"a".repeat(71)}`)).toBeNull();
  });
});
