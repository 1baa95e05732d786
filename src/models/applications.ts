import type { ApplicationRow } from "../db/schema.ts";

export function redirectUrisOf(app: ApplicationRow): string[] {
  return app.redirectUris.split("\n").filter(Boolean);
}
