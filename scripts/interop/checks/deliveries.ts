/**
 * Every delivery of the run, as GoToSocial's log shows both directions: its server's access
 * lines for POSTs to its inboxes (from Rookery), its HTTP client's lines for POSTs to Rookery's.
 * A refused one (4xx, 5xx) fails the row even when the check that caused it passed.
 */
import { readFileSync } from "node:fs";
import { G2R, R2G } from "../report.ts";
import type { Session } from "./session.ts";

const field = (line: string, name: string) => line.match(new RegExp(`${name}=("[^"]*"|\\S+)`))?.[1]?.replace(/^"|"$/g, "").replace(/\\n/g, " ").trim() ?? "";

export async function deliveries(s: Session, gtsLog: string) {
  const lines = readFileSync(gtsLog, "utf8").split("\n");
  const check = (direction: typeof R2G | typeof G2R, pick: (line: string) => { ok: boolean; what: string } | null) =>
    s.report.check("every delivery accepted (GoToSocial's log)", direction, async () => {
      const seen = lines.map(pick).filter((x) => x !== null);
      const refused = seen.filter((x) => !x.ok);
      if (refused.length > 0) throw new Error(`${refused.length} of ${seen.length} refused: ${refused.slice(0, 3).map((x) => x.what).join("; ")}`);
      return `${seen.length} POSTs to inboxes, all 2xx`;
    });
  await check(R2G, (line) => {
    if (!line.includes("method=POST") || !/path=\S*inbox/.test(line) || !line.includes("statusCode=")) return null;
    const status = Number(field(line, "statusCode"));
    return { ok: status >= 200 && status < 300, what: `${status} at ${field(line, "path")} (${field(line, "errors") || field(line, "msg")})` };
  });
  await check(G2R, (line) => {
    if (!line.includes("httpclient") || !line.includes("method=POST") || !/url=\S*inbox/.test(line)) return null;
    const msg = field(line, "msg");
    return { ok: /^2\d\d /.test(msg), what: `${msg} from ${field(line, "url")}` };
  });
}
