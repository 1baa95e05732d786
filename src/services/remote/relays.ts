import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { relays, type RelayRow } from "../../db/schema.ts";
import { unprocessable } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import type { EventBus } from "../../infra/events.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { RemoteFetcher } from "./fetcher.ts";

const RELAY = rowReader(relays);
const ACCEPTED = `SELECT ${RELAY.columns} ${RELAY.from} WHERE state = 'accepted'`;

export type RelayKind = "mastodon" | "litepub";
export type RelayState = "pending" | "accepted" | "refused";

/** The actor whose HTTP signature carried a delivery, as its key's owner (verified) names itself. */
export interface DeliverySigner {
  uri: string;
  inboxUrl: string | null;
  sharedInboxUrl: string | null;
}

/** Who carried a delivery: asked only when the activity concerns nobody here (a signature check, maybe a fetch). */
export type DeliveredBy = () => Promise<DeliverySigner | null>;

/**
 * The relays the instance actor follows, as Mastodon's Relay (admin/relays) with the LitePub
 * kind beside it: a Mastodon relay is named by its inbox and sent Follow of the Public
 * collection; a LitePub relay (Pleroma's, activityrelay's) is named by its actor, which is
 * followed. Each stays pending until the relay answers its Follow (Accept, Reject, matched by
 * the Follow's IRI), and only accepted relays are believed and delivered to. What a relay
 * brings is taken as a public status from a stranger (the federated timeline and followed
 * hashtags), never as someone's home timeline; the rules of the domains it comes from and
 * through (blocks, WHITELIST_MODE) hold as for any other.
 */
export class Relays {
  /** Asked on every Follow of the instance actor and every Accept or Reject: prepared once. */
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
    private refuses: (urlOrHost: string) => boolean,
    /** Reads a LitePub relay's actor (null while federation is off). */
    private fetcher: RemoteFetcher | null,
    private publicUrl: string,
  ) {
    const t = port.tables.relays;
    this.q = {
      byFollow: port.orm.select().from(t).where(eq(t.followActivityId, sql.placeholder("followId"))).limit(1).prepare(),
      byActor: port.orm.select({ id: t.id }).from(t).where(eq(t.actorUri, sql.placeholder("actorUri"))).limit(1).prepare(),
    };
  }

  async list(): Promise<RelayRow[]> {
    const t = this.port.tables.relays;
    return this.port.orm.select().from(t).orderBy(t.id);
  }

  /**
   * Subscribes to a relay: `kind` as given, or found out (a URL whose document is an actor at
   * that very IRI is a LitePub relay's; anything else, a Mastodon relay's inbox). A relay
   * refused earlier is asked again; one pending or accepted stays as it is. `guessed`: no kind
   * was given and no relay actor answered at the URL, so it is taken for a Mastodon relay's
   * inbox (the caller says so: a LitePub relay that was down is then mistaken).
   */
  async add(given: string, kind?: RelayKind): Promise<{ relay: RelayRow; created: boolean; guessed: boolean }> {
    const url = this.checked(given);
    const known = await this.byUrl(url);
    if (known && known.state !== "refused") return { relay: known, created: false, guessed: false };
    const actor = kind === "mastodon" ? null : await this.relayActor(url);
    if (kind === "litepub" && actor === null) throw unprocessable(`no relay actor could be fetched at ${url}`);
    const now = this.clock.now();
    const id = known?.id ?? this.ids.next();
    const values = {
      url,
      kind: actor ? "litepub" : "mastodon",
      inboxUrl: actor?.inbox ?? url,
      actorUri: actor ? url : null,
      state: "pending",
      // Its own IRI each time: a relay drops an activity id it has seen.
      followActivityId: `${this.publicUrl}/relays/${id}#follows/${crypto.randomUUID()}`,
      stateChangedAt: now,
    };
    const t = this.port.tables.relays;
    const [relay] = known
      ? // Only while still refused: a second add beside this one (PostgreSQL) that renewed it
        // first has sent its Follow, whose IRI this one must not overwrite.
        await this.port.orm
          .update(t)
          .set(values)
          .where(and(eq(t.id, id), eq(t.state, "refused")))
          .returning()
      : await this.port.orm
          .insert(t)
          .values({ id, ...values, createdAt: now })
          .onConflictDoNothing({ target: t.url })
          .returning();
    if (!relay) {
      // Another add of the URL beside this one (PostgreSQL) stored or renewed it first: answered as if it had come before.
      const first = await this.byUrl(url);
      if (first) return { relay: first, created: false, guessed: false };
      throw new Error(`the relay ${url} was removed while it was being added`);
    }
    await this.events.emit({ type: "relay.subscribed", relay });
    return { relay, created: true, guessed: kind === undefined && actor === null };
  }

  /** Unsubscribes (the relay is sent Undo of its Follow); null when no relay has that URL. */
  async remove(given: string): Promise<RelayRow | null> {
    const url = this.checked(given, { refused: true });
    const relay = await this.byUrl(url);
    if (!relay) return null;
    const t = this.port.tables.relays;
    await this.port.orm.delete(t).where(eq(t.id, relay.id));
    await this.events.emit({ type: "relay.unsubscribed", relay });
    return relay;
  }

  /**
   * A relay's Accept or Reject of the Follow it names: true when that Follow was a relay's
   * (the answer is then nobody else's business). Only the relay's own server answers for it:
   * the answering actor is on the origin of the relay's URL (a Mastodon relay's actor is
   * learnt so).
   */
  async answered(followId: string, actorUri: string, accepted: boolean): Promise<boolean> {
    const [relay] = (await this.q.byFollow.execute({ followId })) as RelayRow[];
    if (!relay) return false;
    if (new URL(actorUri).origin !== new URL(relay.url).origin) return true;
    if (relay.actorUri !== null && relay.actorUri !== actorUri) return true;
    const t = this.port.tables.relays;
    await this.port.orm
      .update(t)
      .set({ state: accepted ? "accepted" : "refused", actorUri, stateChangedAt: this.clock.now() })
      .where(eq(t.id, relay.id));
    return true;
  }

  /**
   * The accepted relay whose actor signed a delivery of someone else's activity (Mastodon's
   * requested_through_relay?: the signer's inbox is the relay's), null when it is none.
   */
  async carrier(deliveredBy: DeliveredBy, actorUri: string): Promise<RelayRow | null> {
    const relays = await this.accepted();
    // No signature is checked while no relay could have carried anything.
    if (relays.length === 0) return null;
    const signer = await deliveredBy();
    if (signer === null || signer.uri === actorUri) return null;
    // By its inbox only on the relay's own server: an actor anywhere can name any inbox as its own.
    const inboxes = [signer.inboxUrl, signer.sharedInboxUrl].filter((u): u is string => u !== null);
    const origin = new URL(signer.uri).origin;
    const relay = relays.find((r) => r.actorUri === signer.uri || (inboxes.includes(r.inboxUrl) && new URL(r.url).origin === origin));
    return relay ?? null;
  }

  /** The accepted relay that is this actor (a LitePub relay's Announce). */
  async byActor(actorUri: string): Promise<RelayRow | null> {
    return (await this.accepted()).find((r) => r.actorUri === actorUri) ?? null;
  }

  /** Whether the actor is a relay subscribed to (a LitePub relay following back is answered). */
  async isRelayActor(actorUri: string): Promise<boolean> {
    return ((await this.q.byActor.execute({ actorUri })) as unknown[]).length > 0;
  }

  /** A status came through the relay: counted, and when. */
  async brought(relayId: number): Promise<void> {
    await this.port.run("UPDATE relays SET received_count = received_count + 1, last_activity_at = ? WHERE id = ?", [this.clock.now(), relayId]);
  }

  /** The relays local public statuses are delivered to. */
  async accepted(): Promise<RelayRow[]> {
    // Raw and read by rowReader: asked for every inbound activity someone else's server may have carried, and every local public post.
    return (await this.port.values(ACCEPTED))
      .map(RELAY.map)
      .filter((r) => !this.refuses(r.inboxUrl) && (r.actorUri === null || !this.refuses(r.actorUri)));
  }

  private async byUrl(url: string): Promise<RelayRow | undefined> {
    const t = this.port.tables.relays;
    return (await this.port.orm.select().from(t).where(eq(t.url, url)).limit(1))[0];
  }

  /** The URL as stored, or the reason it cannot be a relay's. */
  private checked(given: string, options: { refused?: boolean } = {}): string {
    const url = httpUrlOrNull(given.trim());
    if (url === null) throw unprocessable(`${given} is not an http(s) URL`);
    if (new URL(url).origin === new URL(this.publicUrl).origin) throw unprocessable(`${url} is this server`);
    if (!options.refused && this.refuses(url)) throw unprocessable(`${new URL(url).hostname} is a domain this server does not federate with`);
    return url;
  }

  /** A LitePub relay's actor at this very URL, with its inbox; null when the URL is no actor's. */
  private async relayActor(url: string): Promise<{ inbox: string } | null> {
    if (this.fetcher === null) throw unprocessable("federation is off (FEDERATION=off): relays cannot be reached");
    const actor = await this.fetcher.actor(url).catch(() => null);
    const inbox = httpUrlOrNull(actor?.inboxUrl ?? actor?.sharedInboxUrl);
    return actor && actor.uri === url && inbox !== null ? { inbox } : null;
  }
}
