/**
 * The driver's error code of a failed statement, wherever it is carried: bun:sqlite puts it on
 * the error itself (`SQLITE_READONLY`, `SQLITE_CONSTRAINT_UNIQUE`), a drizzle builder wraps the
 * driver's error in `DrizzleQueryError` and keeps it as `cause` (PostgreSQL's too: `23505`).
 * Callers that decide on the code (the serving thread's safety net, constraint checks) ask
 * here, so a service converted to the port's builders is recognised as before.
 */
export function driverErrorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === "object" && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

/** A write refused because the connection is read-only: a serving thread's read that tried to write. */
export function isReadOnlyRefusal(error: unknown): boolean {
  return driverErrorCode(error)?.startsWith("SQLITE_READONLY") === true;
}
