import type { RelayRow } from "../db/schema.ts";

/** A domain whose deliveries failed lately, with its last error (src/federation/delivery.ts keeps them a week). */
export interface FailingHost {
  domain: string;
  failures: number;
  lastStatus: number | null;
  lastError: string;
  lastAt: number;
}

/** The delivery queue as it stands (fedify_messages), and the hosts that failed in the last week. */
export interface DeliveryQueueReport {
  /** Messages waiting: deliveries (and fan-outs) due now or held for a retry. */
  total: number;
  due: number;
  /** Held for a later attempt: a retry after a failure (or an activity sent with a delay). */
  retrying: number;
  /** When the next held message comes due. */
  nextAt: number | null;
  failing: FailingHost[];
}

/** A relay with whether deliveries to its inbox's host fail. */
export interface RelayHealth {
  relay: RelayRow;
  failing: FailingHost | null;
}

export interface StorageUsed {
  /**
   * The database file, its write-ahead log and shared-memory index (bytes); on PostgreSQL the
   * database's size as the server tells it, and no log (the cluster's WAL is shared by its databases).
   */
  database: number;
  wal: number | null;
  /** Files under DATA_DIR/media other than the remote cache: uploads, avatars, headers, emojis, archives. */
  media: number;
  /** Copies of remote images (CACHE_REMOTE_MEDIA), and their bound when the cache is on. */
  remoteCache: number;
  remoteCacheLimit: number | null;
  /** The bucket the media are kept in (MEDIA_STORAGE=s3), whose size the store's console tells; null: the files above are all. */
  mediaBucket: string | null;
  /** When the files were last added up (the walk is kept a few minutes). */
  measuredAt: number;
}

export interface PeerCount {
  domain: string;
  accounts: number;
}

/** One hour of federation's traffic (federation_traffic). */
export interface TrafficHour {
  /** The hour's start (ms since the epoch, UTC). */
  hour: number;
  attempted: number;
  failed: number;
  received: number;
}

export interface InboxRate {
  /** Activities received in the last whole minute. */
  lastMinute: number;
  /** In the last 60 minutes (or since `countingSince`, when the server started within the hour). */
  lastHour: number;
  /** When this process began counting: the per-minute figures are in memory and start again at each start. */
  countingSince: number;
}

/** What the federation health page shows. */
export interface FederationHealthReport {
  queue: DeliveryQueueReport;
  /** Other servers known here (they have accounts stored), and those with the most accounts. */
  peers: { domains: number; accounts: number; top: PeerCount[] };
  inbox: InboxRate;
  /** The last 24 hours of deliveries and received activities, the current hour last. */
  traffic: TrafficHour[];
  relays: RelayHealth[];
  storage: StorageUsed;
}
