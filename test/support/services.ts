import { registerConsequences } from "../../src/services/consequences.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/clock.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import { openDatabase, type DbHandle } from "../../src/db/connection.ts";
import { largestId } from "../../src/db/largest-id.ts";
import type { AccountRow, StatusRow } from "../../src/db/schema.ts";
import { IdGenerator } from "../../src/ids.ts";
import { MediaStorage } from "../../src/media-files/storage.ts";
import type { Services } from "../../src/services/index.ts";
import { assembleServices } from "../../src/server.ts";
import { loadInstanceKeys } from "../../src/services/instance-keys.ts";
import type { StatusInput } from "../../src/services/statuses/posting.ts";

export interface TestServices {
  services: Services;
  database: DbHandle;
  clock: ManualClock;
  /** The services' id generator, for a service a test builds beside them. */
  ids: IdGenerator;
  /** The configuration they were assembled with, likewise. */
  config: Config;
  /** A local account, made as the admin CLI makes it. */
  local(username: string): Promise<AccountRow>;
  /** An account of another server, stored as federation stores one (no server is asked). */
  remote(username: string, domain: string): Promise<AccountRow>;
  /** A status posted as POST /api/v1/statuses posts it (the composer, in the group commit). */
  post(author: AccountRow, fields: StatusInput): Promise<StatusRow>;
  close(): void;
}

/**
 * The services over a fresh database, wired as the server wires them (assembleServices), with no
 * HTTP server, no federation and no timers running: for the rules that live in services, tested
 * where they live. The clock stands still at `start` until the test moves it.
 */
export async function startTestServices(env: Record<string, string> = {}, start = Date.UTC(2026, 0, 15, 12)): Promise<TestServices> {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-services-"));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", PUBLIC_URL: "http://rookery.test", LOG_REQUESTS: "false", RATE_LIMITS: "off", ...env });
  const database = openDatabase(dataDir);
  const clock = new ManualClock(start);
  const ids = new IdGenerator(clock);
  ids.seed(await largestId(database.port));
  const keys = await loadInstanceKeys(database.port);
  const storage = new MediaStorage(dataDir, config.publicUrl);
  const { services } = assembleServices({ config, port: database.port, clock, ids, storage, keys }, { federation: false });
  await services.federationDomains.load();
  // What follows a write, as in the server (no streams, no federation here).
  registerConsequences(services.events, services, {});
  return {
    services,
    database,
    clock,
    ids,
    config,
    local: (username) => services.accounts.create({ username, email: `${username}@example.test`, password: "correct horse battery staple" }, { api: false }),
    async remote(username, domain) {
      const uri = `https://${domain}/users/${username}`;
      const [account] = await database.port.orm
        .insert(database.port.tables.accounts)
        .values({ id: ids.next(), username, domain, uri, url: uri, inboxUrl: `${uri}/inbox`, createdAt: clock.now() - 365 * 86_400_000 })
        .returning();
      return account!;
    },
    async post(author, fields) {
      const posted = await services.composer.post({ accountId: author.id, applicationId: null, fields, sent: {} });
      if (posted.kind !== "status") throw new Error("a status was scheduled, not posted");
      return posted.status;
    },
    close() {
      database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
