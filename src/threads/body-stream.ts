import type { BodyMessage } from "./protocol.ts";

/**
 * A body carried between two threads over postMessage, a chunk at a time as the reading side
 * asks for it: a request body from a serving thread to the main thread, an answer's body back.
 * Neither side ever holds more than a chunk or two of it, however large it is (an archive
 * download of hundreds of MB, an upload), and the source is read only as fast as the client
 * at the far end takes it. A reader that goes away cancels the source on the other side.
 */

/** Read before the head is sent: a body this small (most answers) goes whole with it, in one message. */
export const INLINE_BYTES = 64 * 1024;
/** The most one message carries: a source's larger chunk (a file read whole) goes in pieces. */
export const CHUNK_BYTES = 256 * 1024;

type Post = (message: BodyMessage, transfer?: Transferable[]) => void;

interface Source {
  reader: ReadableStreamDefaultReader<Uint8Array>;
  /** What the last chunk read had past CHUNK_BYTES, sent at the next pull. */
  rest: Uint8Array | null;
}

/** The sending side: reads each body from its source when the other side pulls. */
export class BodySender {
  private sources = new Map<number, Source>();

  constructor(
    private post: Post,
    /** Told when a body starts or stops being sent (the counts tests read). */
    private changed: () => void = () => {},
  ) {}

  /**
   * Starts sending `body` as `id`: reads up to INLINE_BYTES of it at once and answers them,
   * with whether more follows (then the other side pulls it, chunk by chunk).
   */
  async open(id: number, body: ReadableStream<Uint8Array> | null): Promise<{ first: ArrayBuffer | null; more: boolean }> {
    if (!body) return { first: null, more: false };
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      while (size < INLINE_BYTES) {
        const { done, value } = await reader.read();
        if (done) return { first: join(chunks, size), more: false };
        chunks.push(value);
        size += value.byteLength;
      }
    } catch (e) {
      void reader.cancel().catch(() => {});
      throw e;
    }
    this.sources.set(id, { reader, rest: null });
    this.changed();
    return { first: join(chunks, size), more: true };
  }

  /** The other side wants the next chunk of `id`. */
  async pull(id: number) {
    const source = this.sources.get(id);
    if (!source) return;
    try {
      let piece = source.rest;
      source.rest = null;
      if (!piece) {
        const { done, value } = await source.reader.read();
        if (done) return this.finish(id, { type: "end", id });
        piece = value;
      }
      if (piece.byteLength > CHUNK_BYTES) {
        source.rest = piece.subarray(CHUNK_BYTES);
        piece = piece.subarray(0, CHUNK_BYTES);
      }
      // Copied into a buffer of its own, then transferred: the source's chunk may be a view of
      // memory it keeps (a cached document), which a transfer would take from it.
      const bytes = piece.slice().buffer as ArrayBuffer;
      if (this.sources.has(id)) this.post({ type: "chunk", id, bytes }, [bytes]);
    } catch {
      this.finish(id, { type: "abort", id });
    }
  }

  /** The other side stopped reading `id` (its client went away): the source is cancelled, so nothing keeps reading it. */
  cancel(id: number) {
    const source = this.sources.get(id);
    if (!source) return;
    this.sources.delete(id);
    this.changed();
    void source.reader.cancel().catch(() => {});
  }

  /** Every body cancelled (the other thread stopped). */
  cancelAll() {
    for (const id of [...this.sources.keys()]) this.cancel(id);
  }

  get size(): number {
    return this.sources.size;
  }

  private finish(id: number, message: BodyMessage) {
    if (!this.sources.delete(id)) return;
    this.changed();
    this.post(message);
  }
}

interface Sink {
  controller: ReadableStreamDefaultController<Uint8Array>;
  /** The pull waiting for the chunk asked for. */
  arrived: (() => void) | null;
}

/** The reading side: a ReadableStream per body that asks the other side for each chunk as it is read. */
export class BodyReceiver {
  private sinks = new Map<number, Sink>();

  constructor(
    private post: Post,
    private changed: () => void = () => {},
  ) {}

  /** The body `id` as a stream: `first` at once, then (if `more`) the rest as it is read. */
  stream(id: number, first: ArrayBuffer | null, more: boolean): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        if (first && first.byteLength > 0) controller.enqueue(new Uint8Array(first));
        if (!more) return controller.close();
        this.sinks.set(id, { controller, arrived: null });
        this.changed();
      },
      // Called when the reader wants more than is queued: one chunk asked for at a time.
      pull: () => {
        const sink = this.sinks.get(id);
        if (!sink) return;
        return new Promise<void>((resolve) => {
          sink.arrived = resolve;
          this.post({ type: "pull", id });
        });
      },
      cancel: () => {
        if (this.end(id)) this.post({ type: "cancel", id });
      },
    });
  }

  /** What the other side sent of `id`. */
  receive(message: BodyMessage) {
    const sink = this.sinks.get(message.id);
    if (!sink) return;
    if (message.type === "chunk") sink.controller.enqueue(new Uint8Array(message.bytes));
    else if (message.type === "end") {
      this.end(message.id);
      sink.controller.close();
    } else if (message.type === "abort") {
      this.end(message.id);
      sink.controller.error(new Error("the body's source failed"));
    }
    sink.arrived?.();
    sink.arrived = null;
  }

  /**
   * The body `id` is no longer wanted here, and the other side knows it (it stopped sending):
   * the stream ends where it is.
   */
  drop(id: number) {
    const sink = this.sinks.get(id);
    if (!sink || !this.end(id)) return;
    try {
      sink.controller.error(new Error("the body is no longer read"));
    } catch {
      // already closed
    }
    sink.arrived?.();
  }

  /** Every body ended (the other thread stopped). */
  dropAll() {
    for (const id of [...this.sinks.keys()]) this.drop(id);
  }

  get size(): number {
    return this.sinks.size;
  }

  private end(id: number): boolean {
    if (!this.sinks.delete(id)) return false;
    this.changed();
    return true;
  }
}

function join(chunks: Uint8Array[], size: number): ArrayBuffer | null {
  if (size === 0) return null;
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole.buffer;
}
