import { SetupError } from "../errors.ts";

// Ordinary failures (a file that cannot be written, a port in use, a database that is busy)
// are the operator's to fix, and a stack trace only hides the one line that says what to do.
// What is not recognised here is a bug, and keeps its stack for the report.

interface SystemError extends Error {
  code?: unknown;
  syscall?: unknown;
  path?: unknown;
}

const SYSTEM_CODES: Record<string, string> = {
  ENOENT: "no such file or folder",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EEXIST: "already exists",
  ENOSPC: "no space left on the device",
  EROFS: "read-only file system",
  EISDIR: "is a folder",
  ENOTDIR: "not a folder",
  EMFILE: "too many open files",
};

/** One line for an ordinary failure, or null for one that is a bug. */
export function ordinaryFailure(e: unknown): string | null {
  if (e instanceof SetupError) return e.message;
  if (!(e instanceof Error)) return null;
  const { code, path } = e as SystemError;
  if (typeof code !== "string") return null;
  if (code.startsWith("SQLITE_")) {
    if (code.startsWith("SQLITE_BUSY")) return `the database is busy (${e.message}): another process holds it too long; try again`;
    if (code.startsWith("SQLITE_FULL")) return "the disk is full: the database cannot grow";
    if (code.startsWith("SQLITE_NOTADB") || code.startsWith("SQLITE_CORRUPT")) return `${e.message}: is DATA_DIR the server's data directory? (README: Backups and restores)`;
    if (code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_IOERR") || code.startsWith("SQLITE_PERM")) return e.message;
    return null;
  }
  // mkdir of DATA_DIR (or of a folder a command writes into) where a file stands.
  if ((code === "EEXIST" || code === "ENOTDIR") && (e as SystemError).syscall === "mkdir" && typeof path === "string") return `cannot make the folder ${path}: a file stands in its way`;
  const reason = SYSTEM_CODES[code];
  if (!reason) return null;
  return typeof path === "string" ? `${path}: ${reason}` : `${e.message.split("\n")[0]}`;
}

/** Why the server could not listen at HOST and PORT, in the operator's terms; null for anything else. */
export function listenFailure(e: unknown, at: { host: string; port: number }): string | null {
  const code = e instanceof Error ? (e as SystemError).code : undefined;
  const where = `${at.host.includes(":") ? `[${at.host}]` : at.host}:${at.port}`;
  switch (code) {
    case "EADDRINUSE":
      return `cannot listen at ${where}: the port is in use (is Rookery already running?); stop what holds it, or set PORT to a free port`;
    case "EACCES":
      return `cannot listen at ${where}: ports below 1024 need privileges; set PORT to 1024 or above and put a reverse proxy in front`;
    case "EADDRNOTAVAIL":
    case "EINVAL":
      return `cannot listen at ${where}: HOST is not an address of this machine (127.0.0.1, ::1, 0.0.0.0 or one of its own)`;
    default:
      return null;
  }
}
