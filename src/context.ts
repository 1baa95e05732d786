import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
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
  /**
   * Moves whenever committed data may have changed, by any writer (DatabasePort.generation):
   * what the documents kept as bytes are keyed on (src/http/kept-json.ts).
   */
  databaseGeneration: () => string | Promise<string>;
  storage: MediaStorage;
  keys: InstanceKeys;
  services: Services;
  urls: Urls;
}
