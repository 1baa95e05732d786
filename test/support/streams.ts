/** Real streaming clients for tests: an SSE reader over fetch and a WebSocket collector. */
import { SseConnection } from "../../src/streaming/sse.ts";
import type { TestServer } from "./server.ts";
import { drain, eventually } from "./wait.ts";

/** How long a stream may take to show an event before a test gives up (a busy machine is slow). */
const TIMEOUT_MS = 10_000;

export interface StreamEvent {
  event: string;
  /** The raw `data:` line (SSE) or `payload` string (WebSocket); undefined when absent. */
  data: string | undefined;
  /** WebSocket frames only: the `stream` array. */
  stream?: unknown[];
}

/** A server-sent events connection read in the background. */
export class SseClient {
  events: StreamEvent[] = [];
  comments: string[] = [];
  /** Everything received, byte for byte (decoded). */
  raw = "";
  ended = false;
  private buffer = "";
  private reader: ReadableStreamDefaultReader<Uint8Array>;

  private constructor(
    readonly response: Response,
    private controller: AbortController,
  ) {
    this.reader = response.body!.getReader();
    void this.pump();
  }

  static async open(url: string, options: { token?: string; headers?: Record<string, string> } = {}): Promise<SseClient> {
    const controller = new AbortController();
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const response = await fetch(url, { headers, signal: controller.signal });
    if (response.status !== 200) throw new Error(`SSE ${url} answered ${response.status}: ${await response.text()}`);
    const client = new SseClient(response, controller);
    await client.waitForComment(")");
    return client;
  }

  private async pump() {
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await this.reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        this.raw += text;
        this.buffer += text;
        this.parse();
      }
    } catch {
      // aborted
    }
    this.ended = true;
  }

  private parse() {
    // Comments may end with a single newline (":)\n"); events end with a blank line.
    for (;;) {
      if (this.buffer.startsWith(":")) {
        const nl = this.buffer.indexOf("\n");
        if (nl < 0) return;
        this.comments.push(this.buffer.slice(1, nl));
        this.buffer = this.buffer.slice(nl + 1).replace(/^\n/, "");
        continue;
      }
      const end = this.buffer.indexOf("\n\n");
      if (end < 0) return;
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = "message";
      let data: string | undefined;
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data = data === undefined ? line.slice(6) : `${data}\n${line.slice(6)}`;
      }
      this.events.push({ event, data });
    }
  }

  waitForComment(text: string, timeoutMs = TIMEOUT_MS) {
    return eventually(() => this.comments.includes(text), `comment :${text}`, timeoutMs);
  }

  /** The first event (from `from` on) matching; resolves with it. */
  waitFor(match: (e: StreamEvent) => boolean, timeoutMs = TIMEOUT_MS): Promise<StreamEvent> {
    return eventually(() => this.events.find(match), () => `an SSE event; have ${JSON.stringify(this.events.map((e) => e.event))}`, timeoutMs);
  }

  /** Heartbeat comments received so far. */
  get heartbeats() {
    return this.comments.filter((c) => c === "thump").length;
  }

  waitForEnd(timeoutMs = TIMEOUT_MS) {
    return eventually(() => this.ended, "the SSE response to end", timeoutMs);
  }

  close() {
    this.controller.abort();
  }
}

/** A WebSocket collecting every frame (parsed), with its close code. */
export class WsClient {
  frames: Record<string, any>[] = [];
  rawFrames: string[] = [];
  closeCode: number | null = null;
  closeReason = "";
  /** Fences sent and answered (their answers are kept out of `frames`). */
  private fencesSent = 0;
  private fencesAnswered = 0;

  private constructor(readonly socket: WebSocket) {
    socket.addEventListener("message", (m) => {
      const text = String(m.data);
      if (this.fencesAnswered < this.fencesSent && text === FENCE_ANSWER) {
        this.fencesAnswered++;
        return;
      }
      this.rawFrames.push(text);
      this.frames.push(JSON.parse(text));
    });
    socket.addEventListener("close", (e) => {
      this.closeCode = e.code;
      this.closeReason = e.reason;
    });
  }

  static open(url: string, protocols?: string | string[], options: { headers?: Record<string, string> } = {}): Promise<WsClient> {
    // Bun's WebSocket takes headers as a third option, like Node's ws.
    const socket = options.headers
      ? new WebSocket(url, { protocols, headers: options.headers } as unknown as string[])
      : new WebSocket(url, protocols);
    const client = new WsClient(socket);
    return new Promise((resolve, reject) => {
      socket.addEventListener("open", () => resolve(client));
      socket.addEventListener("error", () => reject(new Error(`WebSocket ${url} failed to open`)));
    });
  }

  send(body: unknown) {
    this.socket.send(typeof body === "string" ? body : JSON.stringify(body));
  }

  /** Events as StreamEvents (error frames excluded). */
  get events(): StreamEvent[] {
    return this.frames.filter((f) => "event" in f).map((f) => ({ event: f.event, data: f.payload, stream: f.stream }));
  }

  waitFor(match: (f: Record<string, any>) => boolean, timeoutMs = TIMEOUT_MS): Promise<Record<string, any>> {
    return eventually(() => this.frames.find(match), () => `a WebSocket frame; have ${JSON.stringify(this.rawFrames.map((f) => f.slice(0, 80)))}`, timeoutMs);
  }

  waitForClose(timeoutMs = TIMEOUT_MS) {
    return eventually(() => this.closeCode, "the WebSocket to close", timeoutMs);
  }

  close() {
    this.socket.close();
  }

  /**
   * A round trip on this socket: a message the server answers with an error frame. The server
   * handles a socket's messages in order and the answer is sent after every frame sent before
   * it, so once it is here the server has acted on everything sent earlier (subscriptions) and
   * this socket has received everything the server sent before.
   */
  async fence(timeoutMs = TIMEOUT_MS) {
    const target = ++this.fencesSent;
    this.send({ type: FENCE_TYPE });
    await eventually(() => this.fencesAnswered >= target, "the answer to a fence", timeoutMs);
  }
}

const FENCE_TYPE = "test:fence";
const FENCE_ANSWER = JSON.stringify({ error: "Unknown message type", status: 400 });

/**
 * Proves that each client has received everything the server will ever send it for what has
 * happened so far, so that a test may then check what did NOT arrive. The server's queues
 * drain (drain()); then a marker is sent down each client's own connection, after anything
 * sent before it: a heartbeat comment on every SSE response, a fence on each WebSocket.
 * Awaiting the marker on each client also proves the connection is still open.
 */
export async function delivered(server: TestServer, ...clients: (SseClient | WsClient)[]): Promise<void> {
  await drain(server);
  const sse = clients.filter((c): c is SseClient => c instanceof SseClient).map((c) => ({ c, seen: c.heartbeats }));
  // The keep-alive beat (the timer wheel runs it every 15 s), to every SSE response at once.
  for (const conn of server.streaming.hub.connections()) if (conn instanceof SseConnection) conn.heartbeat();
  await Promise.all([
    ...sse.map(({ c, seen }) => eventually(() => c.heartbeats > seen, "a heartbeat after the events", TIMEOUT_MS)),
    ...clients.filter((c): c is WsClient => c instanceof WsClient).map((c) => c.fence()),
  ]);
}
