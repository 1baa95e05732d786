// The streaming baseline: a bare Bun server that holds SSE responses and WebSockets and, on
// POST /publish, writes the posted text to every one of them (one frame built once, no
// per-reader work). What Rookery's streaming costs is measured against this, in the same run.
const port = Number(process.env.PORT ?? 3903);
const encoder = new TextEncoder();
const sse = new Set<ReadableStreamDefaultController<Uint8Array>>();

const server = Bun.serve<undefined>({
  port,
  hostname: "127.0.0.1",
  async fetch(request, srv) {
    const path = new URL(request.url).pathname;
    if (request.headers.get("upgrade") === "websocket") return srv.upgrade(request, { data: undefined }) ? undefined : new Response("no", { status: 400 });
    if (path === "/api/v1/streaming/health") return new Response("OK");
    if (path === "/publish") {
      const body = await request.text();
      const sseFrame = encoder.encode(`event: update\ndata: ${body}\n\n`);
      for (const c of sse) c.enqueue(sseFrame);
      srv.publish("all", JSON.stringify({ stream: ["public:local"], event: "update", payload: body }));
      return new Response("ok");
    }
    let controller: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
        sse.add(c);
        c.enqueue(encoder.encode(":)\n"));
      },
      cancel() {
        sse.delete(controller);
      },
    });
    srv.timeout(request, 0);
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  },
  websocket: {
    open(ws) {
      ws.subscribe("all");
    },
    message() {},
    idleTimeout: 0,
    sendPings: false,
  },
});
console.log(`bare stream server on ${server.port}`);
