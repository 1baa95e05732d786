import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { forbidden } from "../../errors.ts";
import type { DeliveryQueueReport, FederationHealthReport, PeerCount, RelayHealth, StorageUsed } from "../../models/federation-health.ts";
import { can } from "../../models/roles.ts";
import type { Relays } from "../remote/relays.ts";
import type { StaffActor } from "./audit-log.ts";
import type { FederationTraffic } from "./traffic.ts";

export type { FederationHealthReport };

/** The files added up are kept this long: walking a large media folder on every look would cost more than the look. */
const STORAGE_TTL_MS = 5 * 60 * 1000;
/** Folders of DATA_DIR/media that hold the remote media cache (RemoteMediaCache). */
const REMOTE_CACHE_DIRS = new Set(["remote_media", "remote_previews"]);
const TOP_PEERS = 20;

export interface FederationHealthDeps {
  db: DatabasePort;
  clock: Clock;
  /** DATA_DIR: the database file and the media folder are in it. */
  dataDir: string;
  databaseFile: string;
  traffic: FederationTraffic;
  relays: Pick<Relays, "list">;
  /** The delivery queue, read by src/federation (its tables, its failure records). */
  deliveryQueue: () => Promise<DeliveryQueueReport>;
  /** REMOTE_MEDIA_CACHE_MB in bytes, when CACHE_REMOTE_MEDIA is on. */
  remoteCacheLimit: number | null;
  /** The bucket the media are in (MEDIA_STORAGE=s3): not walked, only named. */
  mediaBucket?: string | null;
}

/**
 * What the admin pages' federation health page shows (roles that manage federation, as
 * Mastodon's admin/instances): the delivery queue with the hosts that fail, the peers, the
 * inbox rate, the relays and the storage used, with the day's traffic for its chart.
 */
export class FederationHealth {
  private storage: StorageUsed | null = null;

  constructor(private deps: FederationHealthDeps) {}

  async report(actor: StaffActor): Promise<FederationHealthReport> {
    if (actor.kind === "staff" && !can(actor.role, "manage_federation")) throw forbidden();
    const queue = await this.deps.deliveryQueue();
    const relays = (await this.deps.relays.list()).map((relay) => ({ relay, failing: queue.failing.find((f) => f.domain === hostOf(relay.inboxUrl)) ?? null }));
    return { queue, peers: await this.peers(), inbox: this.deps.traffic.inboxRate(), traffic: await this.deps.traffic.hours(24), relays, storage: await this.storageUsed() };
  }

  /** The relays with whether deliveries to each fail (the relays page: no storage walk, no peers). */
  async relays(actor: StaffActor): Promise<RelayHealth[]> {
    if (actor.kind === "staff" && !can(actor.role, "manage_federation")) throw forbidden();
    const { failing } = await this.deps.deliveryQueue();
    return (await this.deps.relays.list()).map((relay) => ({ relay, failing: failing.find((f) => f.domain === hostOf(relay.inboxUrl)) ?? null }));
  }

  private async peers() {
    const db = this.deps.db;
    const totals = (await db.get<{ domains: number; accounts: number }>("SELECT count(DISTINCT domain) AS domains, count(*) AS accounts FROM accounts WHERE domain IS NOT NULL")) ?? {
      domains: 0,
      accounts: 0,
    };
    const top = await db.all<PeerCount>("SELECT domain, count(*) AS accounts FROM accounts WHERE domain IS NOT NULL GROUP BY domain ORDER BY accounts DESC, domain LIMIT ?", [TOP_PEERS]);
    return { ...totals, top };
  }

  private async storageUsed(): Promise<StorageUsed> {
    const now = this.deps.clock.now();
    if (this.storage && now - this.storage.measuredAt < STORAGE_TTL_MS) return this.storage;
    const file = join(this.deps.dataDir, this.deps.databaseFile);
    let media = 0;
    let remoteCache = 0;
    const root = join(this.deps.dataDir, "media");
    for (const entry of entries(root)) {
      const bytes = entry.isDirectory() ? folderBytes(join(root, entry.name)) : sizeOf(join(root, entry.name));
      if (REMOTE_CACHE_DIRS.has(entry.name)) remoteCache += bytes;
      else media += bytes;
    }
    const onPostgres = this.deps.db.dialect === "postgres";
    const database = onPostgres ? Number((await this.deps.db.get<{ n: number }>("SELECT pg_database_size(current_database()) AS n"))?.n ?? 0) : sizeOf(file);
    this.storage = {
      database,
      wal: onPostgres ? null : sizeOf(`${file}-wal`) + sizeOf(`${file}-shm`),
      media,
      remoteCache,
      remoteCacheLimit: this.deps.remoteCacheLimit,
      mediaBucket: this.deps.mediaBucket ?? null,
      measuredAt: now,
    };
    return this.storage;
  }
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function entries(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** The bytes of the files under a folder (links are not followed). */
function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of entries(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(path);
    else if (entry.isFile()) total += sizeOf(path);
  }
  return total;
}
