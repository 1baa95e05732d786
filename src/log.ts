/**
 * One logfmt line per event: readable by a person, parseable by a machine.
 * Never pass secrets here; request paths go through redactPath first.
 */
type Level = "info" | "warn" | "error";
type Fields = Record<string, string | number | boolean | null | undefined>;

// Lines are gathered and written once per turn of the event loop: one write per request
// would cost more than the request itself under load.
let pending: string[] = [];
let scheduled = false;

function flushLog() {
  scheduled = false;
  if (pending.length === 0) return;
  const text = pending.join("\n") + "\n";
  pending = [];
  process.stdout.write(text);
}

process.on("exit", flushLog);

let sink: (line: string) => void = (line) => {
  pending.push(line);
  if (pending.length >= 256) flushLog();
  else if (!scheduled) {
    scheduled = true;
    setImmediate(flushLog);
  }
};
let enabled = true;

export function configureLog(options: { enabled?: boolean; sink?: (line: string) => void }) {
  if (options.enabled !== undefined) enabled = options.enabled;
  if (options.sink) sink = options.sink;
}

function quote(value: string): string {
  return /[\s"=]/.test(value) || value === "" ? JSON.stringify(value) : value;
}

export function log(level: Level, msg: string, fields: Fields = {}) {
  if (!enabled && level === "info") return;
  let line = `time=${new Date().toISOString()} level=${level} msg=${quote(msg)}`;
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    line += ` ${k}=${quote(String(v))}`;
  }
  if (level === "info") sink(line);
  else process.stderr.write(line + "\n");
}

const SECRET_PARAMS = /^(access_token|code|client_secret|password|token|refresh_token|code_verifier)$/i;

/** The path with the values of secret-bearing query parameters replaced. */
export function redactPath(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const pathAndQuery = start < 0 ? "/" : url.slice(start);
  const q = pathAndQuery.indexOf("?");
  if (q < 0) return pathAndQuery;
  const params = new URLSearchParams(pathAndQuery.slice(q + 1));
  for (const key of [...params.keys()]) if (SECRET_PARAMS.test(key)) params.set(key, "[FILTERED]");
  return `${pathAndQuery.slice(0, q)}?${params.toString()}`;
}
