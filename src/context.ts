import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db/connection.ts";
import type { IdGenerator } from "./ids.ts";
import type { MediaStorage } from "./media-files/storage.ts";
import type { Urls } from "./presenters/account.ts";
import type { InstanceKeys } from "./services/instance-keys.ts";
import type { Services } from "./services/index.ts";

/** Everything a route module needs, built once at start-up. */
export interface AppContext {
  config: Config;
  clock: Clock;
  ids: IdGenerator;
  db: Db;
  /**
   * Moves with every write this process made, and those of other processes it hears of
   * (DatabasePort.generation; on PostgreSQL also the cache generations' `database` kind): the
   * kept JSON answers (http/kept-json.ts) are built again when it moved.
   */
  databaseGeneration: () => string;
  storage: MediaStorage;
  keys: InstanceKeys;
  services: Services;
  urls: Urls;
}
