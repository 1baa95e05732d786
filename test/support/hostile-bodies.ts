/**
 * Bodies a hostile server answers with, for the tests of what this server reads from others.
 * The timers here are the hostile server's own pace (how slowly it sends), not a test waiting.
 */

/** A body that never ends; `sent` is told each chunk handed over (what the client let in). */
export function endlessBody(sent: (bytes: number) => void, chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(chunkBytes).fill(32);
  return new ReadableStream({
    pull(c) {
      sent(chunk.byteLength);
      c.enqueue(chunk);
    },
  });
}

/** A body that trickles one byte every `everyMs`, forever; `closed` is told when the client hangs up. */
export function tricklingBody(everyMs: number, closed: () => void = () => {}): ReadableStream<Uint8Array> {
  return new ReadableStream({
    async pull(c) {
      await Bun.sleep(everyMs);
      c.enqueue(new TextEncoder().encode(" "));
    },
    cancel: closed,
  });
}
