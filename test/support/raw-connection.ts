import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

/**
 * One keep-alive HTTP/1.1 connection driven by hand: every request on it reaches the thread
 * the kernel gave it to (fetch's pool gives no such hold), and the test decides when to read,
 * stop reading or hang up. Knows Content-Length and chunked bodies, all Rookery sends.
 */
export class RawConnection {
  private buffered: Buffer = Buffer.alloc(0);
  /** Bytes received on the connection so far. */
  received = 0;
  closed = false;
  private wake: (() => void) | null = null;

  private constructor(
    private socket: Socket,
    private host: string,
  ) {
    socket.on("data", (data: Buffer) => {
      this.buffered = this.buffered.length === 0 ? data : Buffer.concat([this.buffered, data]);
      this.received += data.length;
      this.notify();
    });
    socket.on("close", () => {
      this.closed = true;
      this.notify();
    });
    socket.on("error", () => {});
  }

  static open(base: string): Promise<RawConnection> {
    const url = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port) }, () => resolve(new RawConnection(socket, url.host)));
      socket.once("error", reject);
    });
  }

  /** Sends a request without a body. */
  send(method: string, path: string, headers: Record<string, string> = {}) {
    const lines = [`${method} ${path} HTTP/1.1`, `host: ${this.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.socket.write(`${lines.join("\r\n")}\r\n\r\n`);
  }

  /** The next response's status and headers. */
  async head(): Promise<{ status: number; headers: Headers }> {
    await this.until(() => this.buffered.indexOf("\r\n\r\n") >= 0);
    const end = this.buffered.indexOf("\r\n\r\n");
    const [statusLine, ...lines] = this.buffered.subarray(0, end).toString("latin1").split("\r\n");
    this.buffered = this.buffered.subarray(end + 4);
    const headers = new Headers();
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    return { status: Number(statusLine!.split(" ")[1]), headers };
  }

  /** The next response, whole. */
  async response(): Promise<RawResponse> {
    const { status, headers } = await this.head();
    if (headers.get("transfer-encoding")?.includes("chunked")) {
      const parts: Buffer[] = [];
      for (;;) {
        await this.until(() => this.buffered.indexOf("\r\n") >= 0);
        const eol = this.buffered.indexOf("\r\n");
        const size = parseInt(this.buffered.subarray(0, eol).toString("latin1"), 16);
        await this.until(() => this.buffered.length >= eol + 2 + size + 2);
        parts.push(Buffer.from(this.buffered.subarray(eol + 2, eol + 2 + size)));
        this.buffered = this.buffered.subarray(eol + 2 + size + 2);
        if (size === 0) return { status, headers, body: Buffer.concat(parts) };
      }
    }
    const length = Number(headers.get("content-length") ?? 0);
    await this.until(() => this.buffered.length >= length);
    const body = Buffer.from(this.buffered.subarray(0, length));
    this.buffered = this.buffered.subarray(length);
    return { status, headers, body };
  }

  /** Resolves once `bytes` in all were received. */
  receivedAtLeast(bytes: number): Promise<void> {
    return this.until(() => this.received >= bytes);
  }

  /** Stops reading: what the server sends piles up in the kernel's buffers, then waits. */
  stopReading() {
    this.socket.pause();
  }

  /** Hangs up at once, unread bytes and all (as a client that goes away). */
  destroy() {
    this.socket.destroy();
  }

  private async until(ready: () => boolean): Promise<void> {
    while (!ready()) {
      if (this.closed) throw new Error("the connection closed");
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private notify() {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
