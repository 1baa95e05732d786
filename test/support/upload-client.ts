/**
 * A client in its own process, so that the server's memory is measured alone: sends `count`
 * multipart uploads at once, each made as it is sent (never held) and sent without a
 * Content-Length, and prints one JSON line: each answer, and how much had been sent when it came.
 *
 *   bun test/support/upload-client.ts '{"url": ..., "token": ..., "field": "file", "head": "<hex>", "size": <bytes>, "count": 4}'
 */

export interface UploadOrder {
  url: string;
  token: string;
  field: string;
  /** The file's first bytes, in hex: what the server tells its type from. */
  head: string;
  /** The file's size in bytes (the head, then filler). */
  size: number;
  count: number;
}

export interface UploadResult {
  status: number;
  body: unknown;
  /** Bytes of the body handed to the socket when the answer came. */
  sentWhenAnswered: number;
  /** The whole body's size, had it all been sent. */
  total: number;
}

export const BOUNDARY = "----RookeryStreamedUpload";

function upload(order: UploadOrder): Promise<UploadResult> {
  const enc = (s: string) => new TextEncoder().encode(s);
  const opening = enc(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${order.field}"; filename="upload.bin"\r\nContent-Type: image/png\r\n\r\n`);
  const head = new Uint8Array(Buffer.from(order.head, "hex"));
  const closing = enc(`\r\n--${BOUNDARY}--\r\n`);
  const filler = new Uint8Array(64 * 1024).fill(0x41);
  const total = opening.length + order.size + closing.length;
  let sent = 0;
  let file = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === 0) {
        controller.enqueue(opening);
        controller.enqueue(head);
        file = head.length;
        sent += opening.length + head.length;
      } else if (file < order.size) {
        const n = Math.min(filler.length, order.size - file);
        controller.enqueue(filler.subarray(0, n));
        file += n;
        sent += n;
      } else {
        controller.enqueue(closing);
        sent += closing.length;
        controller.close();
      }
    },
  });
  return fetch(order.url, {
    method: "POST",
    headers: { authorization: `Bearer ${order.token}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    body,
    duplex: "half",
  } as RequestInit).then(async (res) => {
    const sentWhenAnswered = sent;
    return { status: res.status, body: await res.json(), sentWhenAnswered, total };
  });
}

if (import.meta.main) {
  const order = JSON.parse(process.argv[2] as string) as UploadOrder;
  const results = await Promise.all(Array.from({ length: order.count }, () => upload(order)));
  process.stdout.write(`${JSON.stringify(results)}\n`);
}
