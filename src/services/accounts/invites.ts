import { desc, eq, sql, type SQL } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { InviteRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { digest, randomSecret } from "../../auth/secrets.ts";
import { ValidationErrors } from "./validation.ts";

/** Mastodon's Invite comment limit. */
const MAX_COMMENT_LENGTH = 420;
/** Bounds of what one invite may be: a sign-up per minute for two years is already absurd. */
const MAX_USES = 1_000_000;
const MAX_LIFETIME_MS = 10 * 365 * 24 * 3600 * 1000;

/** Why an invite link lets nobody in: unknown (never made, or mistyped), expired (or revoked), used up, or its maker may no longer sign in. */
export type InviteRefusal = "unknown" | "expired" | "used_up" | "disabled";

export class InviteUnusable extends Error {
  constructor(readonly refusal: InviteRefusal) {
    super(`invite ${refusal}`);
  }
}

export interface NewInvite {
  /** Null or absent: any number of sign-ups. */
  maxUses?: number | null;
  /** From now; null or absent: never expires. */
  expiresInMs?: number | null;
  comment?: string;
}

/** A new invite and its link: the code exists only here, the database keeps its digest. */
export interface IssuedInvite {
  invite: InviteRow;
  code: string;
  url: string;
}

/** An invite as its maker lists it. */
export interface InviteListing {
  invite: InviteRow;
  maker: string;
  state: "usable" | InviteRefusal;
}

/**
 * Invite links (Mastodon's Invite and InvitePolicy). Any user who may sign in may make them, as
 * Mastodon's default role allows (`invite_users`); an invite lets its holder sign up whatever
 * REGISTRATIONS says and approved at once (RegistrationService), while it is unexpired, not used
 * up, and its maker may still sign in (Invite#valid_for_use?).
 *
 * On the database port, use() included: it runs inside the sign-up's port transaction, as the
 * `within` work of account.registered does.
 */
export class InviteService {
  // Built once (src/db/port.ts): drizzle spends more building a query than SQLite running it.
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private publicUrl: string,
  ) {
    const { accounts, invites, users } = port.tables;
    const orm = port.orm;
    this.q = {
      byCode: orm.select().from(invites).where(eq(invites.codeHash, sql.placeholder("codeHash"))).prepare(),
      maker: orm
        .select({ approved: users.approved, suspendedAt: accounts.suspendedAt })
        .from(users)
        .innerJoin(accounts, eq(accounts.id, users.accountId))
        .where(eq(users.accountId, sql.placeholder("accountId")))
        .prepare(),
      listing: orm
        .select({ invite: invites, maker: accounts.username })
        .from(invites)
        .innerJoin(accounts, eq(accounts.id, invites.accountId))
        .where(eq(invites.id, sql.placeholder("inviteId")))
        .prepare(),
    };
  }

  linkFor(code: string): string {
    return `${this.publicUrl}/invite/${code}`;
  }

  async create(accountId: number, input: NewInvite = {}): Promise<IssuedInvite> {
    if ((await this.makerState(accountId)) !== null) throw new InviteUnusable("disabled");
    const errors = new ValidationErrors();
    const maxUses = input.maxUses ?? null;
    if (maxUses !== null && (!Number.isInteger(maxUses) || maxUses < 1 || maxUses > MAX_USES)) {
      errors.add("max_uses", "Max uses", "INVALID", `must be a whole number from 1 to ${MAX_USES}`);
    }
    const expiresIn = input.expiresInMs ?? null;
    if (expiresIn !== null && (!Number.isFinite(expiresIn) || expiresIn < 60_000 || expiresIn > MAX_LIFETIME_MS)) {
      errors.add("expires_in", "Expires in", "INVALID", "must be from a minute to ten years");
    }
    const comment = (input.comment ?? "").trim();
    if (comment.length > MAX_COMMENT_LENGTH) errors.add("comment", "Comment", "TOO_LONG", `is too long (maximum is ${MAX_COMMENT_LENGTH} characters)`);
    errors.throwIfAny();
    // 128 bits: a link nobody guesses, short enough to read out.
    const code = randomSecret(16);
    const now = this.clock.now();
    const invite: InviteRow = {
      id: this.ids.next(),
      codeHash: digest(code),
      accountId,
      maxUses,
      uses: 0,
      expiresAt: expiresIn === null ? null : now + expiresIn,
      comment: comment === "" ? null : comment,
      createdAt: now,
    };
    await this.port.orm.insert(this.port.tables.invites).values(invite);
    return { invite, code, url: this.linkFor(code) };
  }

  /** Whose invites the operator's command makes unless told: the owner's, else the first admin's. */
  async operator(): Promise<number | null> {
    const row = await this.port.get<{ id: number }>(
      "SELECT account_id AS id FROM users WHERE role IN ('owner', 'admin') ORDER BY CASE WHEN role = 'owner' THEN 0 ELSE 1 END, account_id LIMIT 1",
    );
    return row?.id ?? null;
  }

  /** The invite a link's code names, and whether it lets anyone in now. */
  async find(code: string): Promise<{ invite: InviteRow | null; state: "usable" | InviteRefusal }> {
    if (code.length === 0 || code.length > 128) return { invite: null, state: "unknown" };
    const [invite] = (await this.q.byCode.execute({ codeHash: digest(code) })) as InviteRow[];
    if (!invite) return { invite: null, state: "unknown" };
    return { invite, state: this.stateOf(invite, await this.makerState(invite.accountId)) };
  }

  /** The invite, when it lets anyone in; null otherwise. */
  async usable(code: string): Promise<InviteRow | null> {
    const { invite, state } = await this.find(code);
    return state === "usable" ? invite : null;
  }

  /**
   * Counts a sign-up against the invite, inside the sign-up's transaction: refused (and the
   * sign-up with it) when another took the last use, or it expired, meanwhile.
   */
  async use(inviteId: number): Promise<void> {
    const counted = await this.port.run("UPDATE invites SET uses = uses + 1 WHERE id = ? AND (max_uses IS NULL OR uses < max_uses) AND (expires_at IS NULL OR expires_at > ?)", [inviteId, this.clock.now()]);
    if (counted === 0) {
      const { invites: rows } = this.port.tables;
      const [row] = await this.port.orm.select().from(rows).where(eq(rows.id, inviteId)).limit(1);
      throw new InviteUnusable(row ? (this.stateOf(row, await this.makerState(row.accountId)) as InviteRefusal) : "unknown");
    }
  }

  /** One invite by its id, as listed. */
  async listing(inviteId: number): Promise<InviteListing | undefined> {
    const [row] = (await this.q.listing.execute({ inviteId })) as { invite: InviteRow; maker: string }[];
    return row && { ...row, state: this.stateOf(row.invite, await this.makerState(row.invite.accountId)) };
  }

  /** Every invite (the operator's list), or one user's, newest first. */
  async list(accountId?: number): Promise<InviteListing[]> {
    const { accounts, invites } = this.port.tables;
    const where: SQL | undefined = accountId === undefined ? undefined : eq(invites.accountId, accountId);
    const rows = await this.port.orm
      .select({ invite: invites, maker: accounts.username })
      .from(invites)
      .innerJoin(accounts, eq(accounts.id, invites.accountId))
      .where(where)
      .orderBy(desc(invites.id));
    // Most lists are one maker's: their state is read once.
    const makers = new Map<number, "disabled" | null>();
    for (const r of rows) if (!makers.has(r.invite.accountId)) makers.set(r.invite.accountId, await this.makerState(r.invite.accountId));
    return rows.map((r) => ({ ...r, state: this.stateOf(r.invite, makers.get(r.invite.accountId)!) }));
  }

  /**
   * Revokes an invite: it expires now (Mastodon's Invite#expire!). `accountId`: only that
   * user's own (a user revoking theirs); absent, any (the operator). "expired": it already had;
   * null: there is no such invite (of theirs).
   */
  async revoke(inviteId: number, accountId?: number): Promise<"revoked" | "expired" | null> {
    const now = this.clock.now();
    // Positional parameters, the owner's test written for each case (a parameter's type must be known on PostgreSQL).
    const mine = accountId === undefined ? "" : " AND account_id = ?";
    const owner = accountId === undefined ? [] : [accountId];
    const expired = await this.port.run(`UPDATE invites SET expires_at = ? WHERE id = ?${mine} AND (expires_at IS NULL OR expires_at > ?)`, [now, inviteId, ...owner, now]);
    if (expired > 0) return "revoked";
    const exists = await this.port.get(`SELECT id FROM invites WHERE id = ?${mine}`, [inviteId, ...owner]);
    return exists ? "expired" : null;
  }

  private stateOf(invite: InviteRow, maker: "disabled" | null): "usable" | InviteRefusal {
    if (invite.expiresAt !== null && invite.expiresAt <= this.clock.now()) return "expired";
    if (invite.maxUses !== null && invite.uses >= invite.maxUses) return "used_up";
    if (maker !== null) return "disabled";
    return "usable";
  }

  /** Whether the user may make invites, and their invites let anyone in: one who may sign in (approved, not suspended). */
  private async makerState(accountId: number): Promise<"disabled" | null> {
    const [row] = await this.q.maker.execute({ accountId });
    return row && row.approved && row.suspendedAt === null ? null : "disabled";
  }
}
