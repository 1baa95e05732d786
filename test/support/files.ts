import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { TestServer } from "./server.ts";

/** Every file under the server's media folder: what uploads left behind. */
export function mediaFiles(server: TestServer): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else out.push(join(dir, entry.name));
    }
  };
  walk(join(server.dataDir, "media"));
  return out;
}
