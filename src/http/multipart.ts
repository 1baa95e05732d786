/**
 * multipart/form-data (RFC 7578) read as it arrives: bytes go in as the socket hands them over,
 * events come out, and no more is held than one chunk and the tail that could be the start of
 * a boundary. Nothing here touches a file or knows a limit: see multipart-body.ts.
 */

export type MultipartEvent =
  /** A part begins. `filename` is null for a text field; "" for a file input left empty. */
  | { type: "part"; name: string | null; filename: string | null; contentType: string | null }
  /** Bytes of the current part's content. A view into the parser's buffer: used before the next push. */
  | { type: "data"; bytes: Uint8Array }
  /** The current part is complete. */
  | { type: "end" };

export class MultipartError extends Error {}

/** A part's header block past this is no form a client sends. */
const MAX_HEADER_BYTES = 16 * 1024;
const CRLF = Buffer.from("\r\n");
const HEADER_END = Buffer.from("\r\n\r\n");

/** The boundary of a multipart Content-Type (quoted or not), or null when there is none usable. */
export function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*(?:;|$)/i.exec(contentType);
  return match ? ((match[1] ?? match[2]) as string) : null;
}

type State = "preamble" | "boundary" | "headers" | "body" | "done";

export class MultipartParser {
  /** CRLF "--" boundary: what ends every part's content (RFC 2046's delimiter). */
  private readonly delimiter: Buffer;
  // The first boundary may open the body with no line before it: as if one had just ended.
  private buffer: Buffer = Buffer.from(CRLF);
  private state: State = "preamble";

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, "latin1");
  }

  /** Whether the closing boundary has been read (what follows it is ignored). */
  get done(): boolean {
    return this.state === "done";
  }

  push(chunk: Uint8Array): MultipartEvent[] {
    if (this.state === "done") return [];
    const incoming = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const events: MultipartEvent[] = [];
    if (this.buffer.length === 0) this.buffer = incoming;
    else if (!this.acrossEdge(incoming, events)) this.buffer = Buffer.concat([this.buffer, incoming]);
    while (this.step(events));
    return events;
  }

  /**
   * Content is not copied to be searched: what is held from the last chunk (less than a
   * delimiter) is looked at with the new chunk's first bytes only. A delimiter that starts in
   * it is taken from there; else it is content, given out whole, and the new chunk is searched
   * as it came. False when the chunk is too short to tell (then the two are simply joined).
   */
  private acrossEdge(incoming: Buffer, events: MultipartEvent[]): boolean {
    if (this.state !== "body" && this.state !== "preamble") return false;
    const held = this.buffer;
    const reach = this.delimiter.length - 1;
    if (incoming.length < reach) return false;
    const at = Buffer.concat([held, incoming.subarray(0, reach)]).indexOf(this.delimiter);
    if (at >= 0 && at < held.length) {
      if (this.state === "body") {
        if (at > 0) events.push({ type: "data", bytes: held.subarray(0, at) });
        events.push({ type: "end" });
      }
      this.buffer = incoming.subarray(at + this.delimiter.length - held.length);
      this.state = "boundary";
      return true;
    }
    if (this.state === "body") events.push({ type: "data", bytes: held });
    this.buffer = incoming;
    return true;
  }

  /** The body has ended: anything but a closing boundary read means it was cut short. */
  end() {
    if (this.state !== "done") throw new MultipartError("the body ended before its closing boundary");
  }

  /** One move of the state machine; false when it needs more bytes. */
  private step(events: MultipartEvent[]): boolean {
    const buffer = this.buffer;
    switch (this.state) {
      case "preamble":
      case "body": {
        const at = buffer.indexOf(this.delimiter);
        if (at < 0) {
          // All but what could be the delimiter's beginning, cut by the chunk's edge.
          const safe = Math.max(0, buffer.length - (this.delimiter.length - 1));
          if (this.state === "body" && safe > 0) events.push({ type: "data", bytes: buffer.subarray(0, safe) });
          this.buffer = buffer.subarray(safe);
          return false;
        }
        if (this.state === "body") {
          if (at > 0) events.push({ type: "data", bytes: buffer.subarray(0, at) });
          events.push({ type: "end" });
        }
        this.buffer = buffer.subarray(at + this.delimiter.length);
        this.state = "boundary";
        return true;
      }
      case "boundary": {
        // The delimiter is followed by "--" (the last one) or by optional blanks and a line end.
        if (buffer.length < 2) return false;
        if (buffer[0] === 0x2d && buffer[1] === 0x2d) {
          this.state = "done";
          this.buffer = Buffer.alloc(0);
          return false;
        }
        const eol = buffer.indexOf(CRLF);
        if (eol < 0) {
          if (buffer.length > 256) throw new MultipartError("a boundary line too long");
          return false;
        }
        for (let i = 0; i < eol; i++) if (buffer[i] !== 0x20 && buffer[i] !== 0x09) throw new MultipartError("text after a boundary");
        this.buffer = buffer.subarray(eol + 2);
        this.state = "headers";
        return true;
      }
      case "headers": {
        if (buffer.length < 2) return false;
        // A part may have no header at all: its blank line comes at once.
        const empty = buffer[0] === 0x0d && buffer[1] === 0x0a;
        const end = empty ? 0 : buffer.indexOf(HEADER_END);
        if (end < 0) {
          if (buffer.length > MAX_HEADER_BYTES) throw new MultipartError("a part's headers are too long");
          return false;
        }
        if (end > MAX_HEADER_BYTES) throw new MultipartError("a part's headers are too long");
        events.push(partOf(buffer.subarray(0, end).toString("utf8")));
        this.buffer = buffer.subarray(end + (empty ? 2 : 4));
        this.state = "body";
        return true;
      }
      case "done":
        return false;
    }
  }
}

/** A part's Content-Disposition and Content-Type, from its header lines (names and values UTF-8, as browsers send them). */
function partOf(block: string): MultipartEvent & { type: "part" } {
  let disposition: Map<string, string> | null = null;
  let contentType: string | null = null;
  for (const line of block.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-disposition") disposition = dispositionParams(value);
    else if (name === "content-type") contentType = value;
  }
  const filenameStar = disposition?.get("filename*");
  let filename = disposition?.get("filename") ?? null;
  if (filenameStar !== undefined) filename = decodeExtended(filenameStar) ?? filename ?? "";
  return { type: "part", name: disposition?.get("name") ?? null, filename, contentType };
}

/**
 * `form-data; name="a"; filename="b.png"`: the parameters, quoted strings unescaped (a backslash
 * quotes the next character). Anything but form-data has no name: the part is not a field.
 */
function dispositionParams(value: string): Map<string, string> {
  const params = new Map<string, string>();
  const re = /\s*;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/gy;
  const semicolon = value.indexOf(";");
  const kind = (semicolon < 0 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  if (kind !== "form-data") return params;
  re.lastIndex = semicolon < 0 ? value.length : semicolon;
  let m: RegExpExecArray | null;
  while ((m = re.exec(value)) !== null) {
    const key = (m[1] as string).toLowerCase();
    if (!params.has(key)) params.set(key, m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : (m[3] as string).trim());
  }
  return params;
}

/** RFC 5987's `UTF-8''name%20here`; null when it cannot be read. */
function decodeExtended(value: string): string | null {
  const m = /^([^']*)'[^']*'(.*)$/.exec(value);
  if (!m) return null;
  try {
    return decodeURIComponent(m[2] as string);
  } catch {
    return null;
  }
}
