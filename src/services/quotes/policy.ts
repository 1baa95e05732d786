import type { DatabasePort } from "../../db/port.ts";
import { marks, padded, paddedSize } from "../../db/prepared.ts";
import type { StatusRow } from "../../db/schema.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { StatusPolicy } from "../statuses/visibility.ts";

/** What a local author may choose (quote_approval_policy, source[quote_policy]): Mastodon 4.5's three. */
export const QUOTE_POLICIES = ["public", "followers", "nobody"] as const;
export type QuotePolicyName = (typeof QUOTE_POLICIES)[number];

/**
 * Who may quote a status, as Mastodon's QuoteApproval lists it: each list holds "public",
 * "followers", "following" or "unsupported_policy" (a remote policy naming accounts one by one).
 */
export interface QuoteApproval {
  automatic: string[];
  manual: string[];
}

/** How a status's policy applies to one account (Mastodon's quote_policy_for_account). */
export type QuoteDecision = "automatic" | "manual" | "unknown" | "denied";

const NOBODY: QuoteApproval = { automatic: [], manual: [] };
const KNOWN = new Set(["public", "followers", "following", "unsupported_policy"]);

export function isQuotePolicy(value: string): value is QuotePolicyName {
  return (QUOTE_POLICIES as readonly string[]).includes(value);
}

/**
 * The row's `quote_approval` for a local status: private and direct statuses are quoted by
 * their author alone whatever was asked (Mastodon's downgrade_quote_policy), the others as
 * their author chose.
 */
export function approvalJson(policy: QuotePolicyName, visibility: string): string {
  const shared = visibility === "public" || visibility === "unlisted";
  const automatic = !shared || policy === "nobody" ? [] : [policy];
  return JSON.stringify({ automatic, manual: [] });
}

/** The row's `quote_approval` read back; none stated (older statuses, remote ones without a policy) is nobody but the author. */
export function approvalOf(row: Pick<StatusRow, "quoteApproval">): QuoteApproval {
  if (row.quoteApproval === null) return NOBODY;
  // Statuses carry a handful of distinct policies, read for every status of every page: each
  // text is parsed once (the result is frozen, shared by every reader).
  let approval = approvals.get(row.quoteApproval);
  if (approval === undefined) {
    if (approvals.size >= 1_000) approvals.clear();
    approvals.set(row.quoteApproval, (approval = parseApproval(row.quoteApproval)));
  }
  return approval;
}

const approvals = new Map<string, QuoteApproval>();

function parseApproval(text: string): QuoteApproval {
  try {
    const parsed = JSON.parse(text) as Partial<QuoteApproval>;
    // Values not known here are shown as Mastodon shows a policy too complex for it.
    const clean = (list: unknown) => Object.freeze([...new Set((Array.isArray(list) ? list : []).map((v) => (KNOWN.has(v as string) ? (v as string) : "unsupported_policy")))]) as string[];
    return Object.freeze({ automatic: clean(parsed.automatic), manual: clean(parsed.manual) });
  } catch {
    return NOBODY;
  }
}

/** The policy name a local status's approval stands for (what an edit keeps when none is given). */
export function policyNameOf(approval: QuoteApproval): QuotePolicyName {
  if (approval.automatic.includes("public")) return "public";
  if (approval.automatic.includes("followers")) return "followers";
  return "nobody";
}

/**
 * Mastodon's Status#quote_policy_for_account over facts already known: whether the account
 * follows the author (`follows`) and the author follows it (`followedBy`). A direct status or a
 * boost is quoted by nobody; the author may always quote their own.
 */
export function decide(quoted: Pick<StatusRow, "accountId" | "visibility" | "reblogOfId" | "quoteApproval">, accountId: number, follows: boolean, followedBy: boolean): QuoteDecision {
  if (quoted.visibility === "direct" || quoted.reblogOfId !== null) return "denied";
  if (quoted.accountId === accountId) return "automatic";
  const { automatic, manual } = approvalOf(quoted);
  const matches = (list: string[]) => list.includes("public") || (list.includes("followers") && follows) || (list.includes("following") && followedBy);
  if (matches(automatic)) return "automatic";
  if (matches(manual)) return "manual";
  if (automatic.includes("unsupported_policy") || manual.includes("unsupported_policy")) return "unknown";
  return "denied";
}

/** Whether a list needs to know who follows whom to be decided. */
const needsFollows = (a: QuoteApproval) => !a.automatic.includes("public") && [...a.automatic, ...a.manual].some((v) => v === "followers" || v === "following");

/**
 * Who may quote what. `mayQuote` is the rule a quote is held to, here (POST /api/v1/statuses)
 * and for requests from other servers (their QuoteRequest): the quoting account must see the
 * status, neither may block the other, a private status is quoted by its author alone (a
 * private post is quoted only privately: see PostingService), and then the status's policy.
 * `currentUser` is what Status#quote_approval tells a reader, decided for a page at once.
 */
export class QuotePolicy {
  constructor(
    private port: DatabasePort,
    private follows: FollowService,
    private moderation: ModerationService,
    private statuses: StatusPolicy,
  ) {
  }

  /** Which of `accountIds` follow the viewer. */
  private async followersAmong(viewerId: number, accountIds: number[]): Promise<Set<number>> {
    const size = paddedSize(accountIds.length);
    const found = await this.port.values(`SELECT account_id FROM follows WHERE target_account_id = ? AND account_id IN (${marks(size)})`, [viewerId, ...padded(accountIds, size)]);
    return new Set(found.map((r) => r[0] as number));
  }

  async mayQuote(quoted: StatusRow, accountId: number): Promise<QuoteDecision> {
    if (quoted.visibility === "direct" || quoted.reblogOfId !== null) return "denied";
    if (quoted.accountId === accountId) return "automatic";
    if (!(await this.statuses.canSee(quoted, accountId))) return "denied";
    const { blocking, blockedBy } = await this.moderation.blocked(accountId, [quoted.accountId]);
    if (blocking.size > 0 || blockedBy.size > 0) return "denied";
    if (quoted.visibility === "private") return "denied";
    const approval = approvalOf(quoted);
    const follows = needsFollows(approval) && (await this.follows.following(accountId, quoted.accountId));
    const followedBy = needsFollows(approval) && (await this.follows.following(quoted.accountId, accountId));
    return decide(quoted, accountId, follows, followedBy);
  }

  /** `current_user` of each status's quote_approval for the viewer (denied for nobody signed in); at most two queries, only for policies that name followers. */
  async currentUser(rows: StatusRow[], viewerId: number | null): Promise<Map<number, QuoteDecision>> {
    const out = new Map<number, QuoteDecision>();
    if (viewerId === null) {
      for (const r of rows) out.set(r.id, "denied");
      return out;
    }
    const asking = rows.filter((r) => r.accountId !== viewerId && r.visibility !== "direct" && r.reblogOfId === null && needsFollows(approvalOf(r)));
    const authors = [...new Set(asking.map((r) => r.accountId))];
    const [followed, followers] = authors.length > 0 ? await Promise.all([this.follows.followedAmong(viewerId, authors), this.followersAmong(viewerId, authors)]) : [new Set<number>(), new Set<number>()];
    for (const r of rows) out.set(r.id, decide(r, viewerId, followed.has(r.accountId), followers.has(r.accountId)));
    return out;
  }
}
