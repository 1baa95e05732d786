import type { DatabasePort } from "../../db/port.ts";
import { marks, padded, paddedSize } from "../../db/prepared.ts";
import type { QuoteRow, StatusRow } from "../../db/schema.ts";
import { rowReader } from "../../db/rows.ts";
import { quotes } from "../../db/schema.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { StatusPolicy } from "../statuses/visibility.ts";

const QUOTE = rowReader(quotes);

/** A status's quote as one viewer is shown it (what Mastodon's BaseQuoteSerializer decides). */
export interface QuoteFacts {
  /** pending | accepted | rejected | revoked | deleted, or for an accepted one the viewer may not see as such: unauthorized | blocked_account | blocked_domain | muted_account. */
  state: string;
  /** The quoted status when it may be named and shown (every state but unauthorized among the accepted ones). */
  quoted: StatusRow | null;
}

/**
 * The quotes of a page of statuses, for one viewer, in a fixed number of queries: the quote rows
 * (one query, whatever the page), then only when there are accepted ones the statuses they
 * quote and the viewer's relations to their authors. A quote read from a server that does not
 * ask (legacy) is shown only once accepted; otherwise every quote is shown with its state.
 */
export class QuoteReads {
  constructor(
    private port: DatabasePort,
    private statuses: StatusPolicy,
    private moderation: ModerationService,
  ) {}

  /** By quoting status id; statuses without a quote shown are absent. `load` reads statuses by id (the reader's). */
  async forStatuses(rows: StatusRow[], viewerId: number | null, load: (ids: number[]) => Promise<StatusRow[]>): Promise<Map<number, QuoteFacts>> {
    const out = new Map<number, QuoteFacts>();
    const ids = rows.filter((r) => r.reblogOfId === null).map((r) => r.id);
    if (ids.length === 0) return out;
    const size = paddedSize(ids.length);
    const found = (await this.port.values(`SELECT ${QUOTE.columns} ${QUOTE.from} WHERE status_id IN (${marks(size)})`, padded(ids, size))).map(QUOTE.map) as QuoteRow[];
    const shown = found.filter((q) => q.state === "accepted" || !q.legacy);
    if (shown.length === 0) return out;
    const accepted = shown.filter((q) => q.state === "accepted" && q.quotedStatusId !== null);
    const wanted = [...new Set(accepted.map((q) => q.quotedStatusId as number))];
    const quoted = new Map((wanted.length === 0 ? [] : await load(wanted)).map((r) => [r.id, r]));
    const visible = new Set((await this.statuses.visible([...quoted.values()], viewerId)).map((r) => r.id));
    const authors = [...new Set([...quoted.values()].map((r) => r.accountId).filter((id) => id !== viewerId))];
    const others = viewerId !== null && authors.length > 0;
    const [{ blocking }, domains, muting] = others
      ? await Promise.all([this.moderation.blocked(viewerId, authors), this.moderation.domainBlocking(viewerId, authors), this.moderation.muted(viewerId, authors)])
      : [{ blocking: new Set<number>() }, new Set<number>(), new Map<number, unknown>()];
    for (const q of shown) {
      if (q.state !== "accepted") {
        out.set(q.statusId, { state: q.state, quoted: null });
        continue;
      }
      const status = q.quotedStatusId === null ? undefined : quoted.get(q.quotedStatusId);
      // A boost is never shown as a quote (Mastodon refuses to quote one).
      if (!status || status.reblogOfId !== null) {
        out.set(q.statusId, { state: "deleted", quoted: null });
        continue;
      }
      // StatusFilter#filter_state_for_quote, in its order; the viewer's own status is always shown.
      let state = "accepted";
      if (status.accountId !== viewerId) {
        if (!visible.has(status.id)) state = "unauthorized";
        else if (domains.has(status.accountId)) state = "blocked_domain";
        else if (blocking.has(status.accountId)) state = "blocked_account";
        else if (muting.has(status.accountId)) state = "muted_account";
      }
      out.set(q.statusId, { state, quoted: state === "unauthorized" ? null : status });
    }
    return out;
  }
}
