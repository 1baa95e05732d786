/** Real streaming clients for tests: an SSE reader over fetch and a WebSocket collector. */

export interface StreamEvent {
  event: string;
  /** The raw `data:` line (SSE) or `payload` string (WebSocket); undefined when absent. */
  data: string | undefined;
  /** WebSocket frames only: the `stream` array. */
  stream?: unknown[];
}

async function until<T>(check: () => T | undefined, timeoutMs: number, what: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await Bun.sleep(5);
  }
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

  waitForComment(text: string, timeoutMs = 3000) {
    return until(() => (this.comments.includes(text) ? true : undefined), timeoutMs, () => `comment :${text}`);
  }

  /** The first event (from `from` on) matching; resolves with it. */
  waitFor(match: (e: StreamEvent) => boolean, timeoutMs = 3000): Promise<StreamEvent> {
    return until(() => this.events.find(match), timeoutMs, () => `an SSE event; have ${JSON.stringify(this.events.map((e) => e.event))}`);
  }

  waitForEnd(timeoutMs = 3000) {
    return until(() => (this.ended ? true : undefined), timeoutMs, () => "the SSE response to end");
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

  private constructor(readonly socket: WebSocket) {
    socket.addEventListener("message", (m) => {
      const text = String(m.data);
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

  waitFor(match: (f: Record<string, any>) => boolean, timeoutMs = 3000): Promise<Record<string, any>> {
    return until(() => this.frames.find(match), timeoutMs, () => `a WebSocket frame; have ${JSON.stringify(this.rawFrames.map((f) => f.slice(0, 80)))}`);
  }

  waitForClose(timeoutMs = 3000) {
    return until(() => this.closeCode ?? undefined, timeoutMs, () => "the WebSocket to close");
  }

  close() {
    this.socket.close();
  }
}

/** Lets in-flight deliveries land before a test checks that something did not arrive. */
export const settle = () => Bun.sleep(60);
