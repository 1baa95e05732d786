/**
 * The driver's error code of a failed statement, wherever it is carried: bun:sqlite puts it on
 * the error itself (`SQLITE_READONLY`, `SQLITE_CONSTRAINT_UNIQUE`), a drizzle builder wraps the
 * driver's error in `DrizzleQueryError` and keeps it as `cause`; PostgreSQL's SQLSTATE (`23505`) is
 * Bun.sql's `errno`.
 * Callers that decide on the code (the serving thread's safety net, constraint checks) ask
 * here, so a service converted to the port's builders is recognised as before.
 */
export function driverErrorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === "object" && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    // Bun.sql's PostgresError names its kind in `code` and carries the SQLSTATE in `errno`.
    if (code === "ERR_POSTGRES_SERVER_ERROR" && typeof errno === "string") return errno;
    if (typeof code === "string") return code;
  }
  return undefined;
}

/** A write refused because the connection is read-only: a serving thread's read that tried to write. */
export function isReadOnlyRefusal(error: unknown): boolean {
  return driverErrorCode(error)?.startsWith("SQLITE_READONLY") === true;
}

/**
 * A write refused by a unique index: SQLite's SQLITE_CONSTRAINT_UNIQUE (or _PRIMARYKEY),
 * PostgreSQL's 23505. On PostgreSQL two processes (or two tasks of one) may both find a row
 * absent and both insert it; the second learns so only here.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = driverErrorCode(error);
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}
