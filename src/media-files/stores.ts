import type { Config } from "../config.ts";
import { S3Store } from "./s3-store.ts";
import { MediaStorage } from "./storage.ts";

/** The media storage the settings choose (MEDIA_STORAGE): files under DATA_DIR/media, or a bucket. */
export function mediaStorageFor(config: Pick<Config, "dataDir" | "publicUrl" | "mediaStorage">): MediaStorage {
  const { mediaStorage } = config;
  return mediaStorage.kind === "s3" ? new MediaStorage(config.dataDir, config.publicUrl, new S3Store(mediaStorage)) : new MediaStorage(config.dataDir, config.publicUrl);
}
