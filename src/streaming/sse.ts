import { StreamConnection, type FrameCache, type StreamHub, type Subscription } from "./hub.ts";

/** Queued bytes past which a reader is too slow to keep: it is dropped, the others go on. */
export const MAX_SSE_BUFFER = 256 * 1024;

const encoder = new TextEncoder();
const OPENING = encoder.encode(":)\n");
const HEARTBEAT = encoder.encode(":thump\n\n");

/**
 * A server-sent events response. Frames are queued on the response's stream, which Bun
 * drains as the socket takes them; the queue is measured in bytes so a reader that stopped
 * reading shows up as a growing backlog and is cut off.
 */
export class SseConnection extends StreamConnection {
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  readonly response: Response;

  constructor(
    private hub: StreamHub,
    accountId: number | null,
    tokenId: number | null,
  ) {
    super(accountId, tokenId);
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
          controller.enqueue(OPENING);
        },
        // The client went away.
        cancel: () => this.hub.disconnect(this),
      },
      { highWaterMark: 0, size: (chunk) => chunk?.byteLength ?? 0 },
    );
    this.response = new Response(stream, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-store",
        // nginx would otherwise hold events back to fill its buffers.
        "x-accel-buffering": "no",
      },
    });
  }

  private write(bytes: Uint8Array) {
    const controller = this.controller;
    if (this.closed || !controller) return;
    if ((controller.desiredSize ?? 0) < -MAX_SSE_BUFFER) {
      this.abort();
      return;
    }
    try {
      controller.enqueue(bytes);
    } catch {
      this.hub.disconnect(this);
    }
  }

  send(_sub: Subscription, frames: FrameCache, payload: string | undefined) {
    this.write(frames.sseFrame(payload));
  }

  heartbeat() {
    this.write(HEARTBEAT);
  }

  /** Ends the response after what is queued (a revoked token). */
  close() {
    if (this.closed) return;
    this.hub.disconnect(this);
    try {
      this.controller?.close();
    } catch {
      // already closed by the client
    }
  }

  /** Drops the connection and its backlog at once. */
  private abort() {
    this.hub.disconnect(this);
    // error(undefined) tears the response down without Bun printing an error.
    this.controller?.error(undefined);
  }
}

