import { expect, test } from "bun:test";
import { timeOfId } from "../../src/ids.ts";
import { createUser, postStatus } from "../support/fixtures.ts";
import { startTestServer } from "../support/server.ts";

/** ID_WORKER reaches the server's ids: each id it makes ends in its worker's number (src/ids.ts). */
test("a server started as worker 3 of 4 makes ids whose low bits are 3, dated by its clock", async () => {
  const server = await startTestServer({ ID_WORKER: "3/4" });
  try {
    const alice = await createUser(server, "alice");
    const posted = await Promise.all([1, 2, 3].map((n) => postStatus(alice, { status: `post ${n}` })));
    for (const id of [Number(alice.id), ...posted.map((s) => Number(s.id))]) {
      expect(id % 4).toBe(3);
      expect(Math.abs(timeOfId(id) - server.clock.now())).toBeLessThan(60_000);
    }
    expect(new Set(posted.map((s) => s.id)).size).toBe(3);
  } finally {
    await server.close();
  }
});
