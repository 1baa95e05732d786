import { expect } from "bun:test";
import { RawConnection } from "./raw-connection.ts";
import type { TestServer } from "./server.ts";

/** A read on the serving thread's connection: the answer, and which thread's edge made it. */
export interface ServingThreadAnswer {
  status: number;
  body: any;
  headers: Headers;
  /** Answered by the serving thread itself, from its own connection to the database. */
  here: boolean;
}

/**
 * WEB_THREADS=2: a keep-alive connection the kernel gave to the serving thread, so that every
 * read on it reaches that thread, which answers it itself or passes it to the main thread.
 * Which did is told twice, and both must agree: by the X-Request-Id's prefix (one per edge;
 * the main thread's learnt from a write, which it always answers) and by the pool's count of
 * passed requests.
 */
export async function servingThreadReader(server: TestServer) {
  const write = await fetch(`${server.base}/api/v1/statuses`, { method: "POST", headers: { connection: "close" } });
  expect(write.status).toBe(401);
  const mainThread = write.headers.get("x-request-id")!.split("-")[0];
  let connection: RawConnection | null = null;
  for (let i = 0; i < 40 && !connection; i++) {
    const c = await RawConnection.open(server.base);
    c.send("GET", "/api/v1/instance");
    const res = await c.response();
    expect(res.status).toBe(200);
    if (res.headers.get("x-request-id")!.split("-")[0] !== mainThread) connection = c;
    else c.destroy();
  }
  if (!connection) throw new Error("no connection was taken by the serving thread");
  const c = connection;
  return {
    async get(path: string, token?: string): Promise<ServingThreadAnswer> {
      const passedBefore = server.threads!.passed;
      c.send("GET", path, token ? { authorization: `Bearer ${token}` } : {});
      const res = await c.response();
      const here = res.headers.get("x-request-id")!.split("-")[0] !== mainThread;
      expect(server.threads!.passed === passedBefore).toBe(here);
      const text = res.body.toString("utf8");
      return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers, here };
    },
    close: () => c.destroy(),
  };
}
