import { afterAll, beforeAll, expect, test } from "bun:test";
import { createUser } from "../support/fixtures.ts";
import { startFederatedPair } from "../support/federation.ts";
import type { TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  await createUser(a, "alice");
  await createUser(b, "bob");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

test("/api/v1/instance/peers lists the servers whose accounts this one knows (host names, sorted), and domain_count counts them", async () => {
  const before = await fetch(`${a.base}/api/v1/instance/peers`).then((r) => r.json());
  expect(before).toEqual([]);
  expect((await fetch(`${a.base}/api/v1/instance`).then((r) => r.json())).stats.domain_count).toBe(0);
  expect(await a.federation!.resolveActor(`${b.base}/users/bob`)).not.toBeNull();
  expect(await fetch(`${a.base}/api/v1/instance/peers`).then((r) => r.json())).toEqual([new URL(b.base).hostname]);
  expect((await fetch(`${a.base}/api/v1/instance`).then((r) => r.json())).stats.domain_count).toBe(1);
});
