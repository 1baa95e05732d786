// The floor under Rookery's reads: Bun.serve alone and a bare Elysia route, answering JSON of
// the sizes given (SMALL_BYTES, PAGE_BYTES: a signed-in status and a home page), built once.
import { Elysia } from "elysia";

const body = (bytes: number) => `{"x":"${"a".repeat(Math.max(0, bytes - 8))}"}`;
const small = body(Number(process.env.SMALL_BYTES ?? 1600));
const page = body(Number(process.env.PAGE_BYTES ?? 32000));
const json = { "content-type": "application/json; charset=utf-8" };
const elysia = new Elysia()
  .get("/elysia/small", () => new Response(small, { headers: json }))
  .get("/elysia/page", () => new Response(page, { headers: json }));
Bun.serve({
  port: Number(process.env.PORT ?? 3902),
  hostname: "127.0.0.1",
  fetch(request) {
    const path = request.url.slice(request.url.indexOf("/", 8));
    if (path === "/bun/small") return new Response(small, { headers: json });
    if (path === "/bun/page") return new Response(page, { headers: json });
    return elysia.handle(request);
  },
});
