import type { DatabasePort } from "../../db/port.ts";
import type { AnnouncementRow, CustomEmojiRow, InstanceRuleRow, RelayRow } from "../../db/schema.ts";
import { forbidden, notFound } from "../../errors.ts";
import { can, type Permission } from "../../models/roles.ts";
import type { InviteService } from "../accounts/invites.ts";
import type { RegistrationsMode } from "../accounts/registrations.ts";
import type { AnnouncementInput, AnnouncementService } from "../announcements.ts";
import type { CustomEmojiService } from "../custom-emojis.ts";
import type { InstanceInfo } from "../instance-info.ts";
import type { RelayKind, Relays } from "../remote/relays.ts";
import type { AuditLog, StaffActor } from "./audit-log.ts";

/**
 * What the admin pages change of the server itself, over the services the command line uses
 * (relays, custom emojis, rules, announcements, the extended description): each behind the
 * permission Mastodon's admin controllers ask for, and each in the audit log, as Mastodon's
 * log_action records them (Rule, CustomEmoji, Announcement; Relay and the description, which
 * Mastodon does not log, are logged here too: the log is the operator's account of changes).
 */
export class AdminInstance {
  constructor(
    private db: DatabasePort,
    private log: AuditLog,
    private relays: Relays,
    private emojis: CustomEmojiService,
    private info: InstanceInfo,
    private announcements: AnnouncementService,
    private invites: InviteService,
  ) {}

  /** Admin::RelaysController: manage_federation. The relay is asked to accept by federation, after the commit. */
  async addRelay(actor: StaffActor, url: string, kind?: RelayKind): Promise<{ relay: RelayRow; created: boolean; guessed: boolean }> {
    authorize(actor, "manage_federation");
    const added = await this.relays.add(url, kind);
    if (added.created) await this.log.record(actor, { action: "create", targetType: "Relay", targetId: added.relay.id, summary: added.relay.url });
    return added;
  }

  async removeRelay(actor: StaffActor, url: string): Promise<RelayRow> {
    authorize(actor, "manage_federation");
    return this.db.transaction(async () => {
      const relay = await this.relays.remove(url);
      if (!relay) throw notFound();
      await this.log.record(actor, { action: "destroy", targetType: "Relay", targetId: relay.id, summary: relay.url });
      return relay;
    });
  }

  /** Admin::CustomEmojisController: manage_custom_emojis; checked as the CLI's `emoji add` checks it. */
  async addEmoji(actor: StaffActor, shortcode: string, image: Uint8Array, category?: string): Promise<CustomEmojiRow> {
    authorize(actor, "manage_custom_emojis");
    const row = await this.emojis.add(shortcode, image, { category });
    await this.log.record(actor, { action: "create", targetType: "CustomEmoji", targetId: row.id, summary: row.shortcode });
    return row;
  }

  async removeEmoji(actor: StaffActor, shortcode: string): Promise<void> {
    authorize(actor, "manage_custom_emojis");
    const row = await this.emojis.find(shortcode);
    if (!row) throw notFound();
    const removed = await this.db.transaction(async () => {
      const gone = await this.emojis.remove(shortcode);
      await this.log.record(actor, { action: "destroy", targetType: "CustomEmoji", targetId: row.id, summary: row.shortcode });
      return gone;
    });
    // Once committed (a rollback keeps the row, which needs its files); the page need not wait for them.
    void this.emojis.removeFiles(removed);
  }

  /** Admin::RulesController: manage_rules. */
  async addRule(actor: StaffActor, text: string, hint?: string): Promise<InstanceRuleRow> {
    authorize(actor, "manage_rules");
    return this.db.transaction(async () => {
      const rule = await this.info.addRule(text, hint);
      await this.log.record(actor, { action: "create", targetType: "Rule", targetId: rule.id, summary: rule.text.slice(0, 80) });
      return rule;
    });
  }

  async removeRule(actor: StaffActor, id: number | null): Promise<void> {
    authorize(actor, "manage_rules");
    const rule = (await this.info.rules()).find((r) => r.id === id);
    if (!rule) throw notFound();
    await this.db.transaction(async () => {
      await this.info.removeRule(rule.id);
      await this.log.record(actor, { action: "destroy", targetType: "Rule", targetId: rule.id, summary: rule.text.slice(0, 80) });
    });
  }

  /** Admin::AnnouncementsController: manage_announcements. */
  async addAnnouncement(actor: StaffActor, input: AnnouncementInput): Promise<AnnouncementRow> {
    authorize(actor, "manage_announcements");
    return this.db.transaction(async () => {
      const row = await this.announcements.create(input);
      await this.log.record(actor, { action: "create", targetType: "Announcement", targetId: row.id, summary: row.text.slice(0, 80) });
      return row;
    });
  }

  async removeAnnouncement(actor: StaffActor, id: number | null): Promise<void> {
    authorize(actor, "manage_announcements");
    const row = (await this.announcements.all()).find((a) => a.id === id);
    if (!row) throw notFound();
    await this.db.transaction(async () => {
      await this.announcements.remove(row.id);
      await this.log.record(actor, { action: "destroy", targetType: "Announcement", targetId: row.id, summary: row.text.slice(0, 80) });
    });
  }

  /** Admin::SettingsController (manage_settings): the extended description (the about page's text). */
  async setDescription(actor: StaffActor, text: string): Promise<void> {
    authorize(actor, "manage_settings");
    await this.db.transaction(async () => {
      await this.info.setExtendedDescription(text);
      await this.log.record(actor, { action: "update", targetType: "Instance", targetId: null, summary: "extended description" });
    });
  }

  /**
   * Admin::InvitesController#destroy (manage_invites): any member's invite expires now, logged as
   * Mastodon logs it. "expired": it had already (nothing to log); a missing invite is a 404.
   */
  async revokeInvite(actor: StaffActor, id: number | null): Promise<"revoked" | "expired"> {
    authorize(actor, "manage_invites");
    if (id === null) throw notFound();
    return this.db.transaction(async () => {
      const listing = await this.invites.listing(id);
      const result = listing ? await this.invites.revoke(id) : null;
      if (!listing || result === null) throw notFound();
      const summary = `@${listing.maker}'s invite${listing.invite.comment ? `: ${listing.invite.comment.slice(0, 60)}` : ""}`;
      if (result === "revoked") await this.log.record(actor, { action: "destroy", targetType: "Invite", targetId: id, summary });
      return result;
    });
  }

  /**
   * Admin::Settings::RegistrationsController (manage_settings): who may sign up, from now on,
   * over REGISTRATIONS; null gives the choice back to REGISTRATIONS. Mastodon does not log its
   * settings; here the mode is logged as the description is.
   */
  async setRegistrationsMode(actor: StaffActor, mode: RegistrationsMode | null): Promise<void> {
    authorize(actor, "manage_settings");
    await this.db.transaction(async () => {
      await this.info.setRegistrationsMode(mode);
      const summary = mode === null ? `registrations mode: as REGISTRATIONS says (${this.info.registrationsSetting})` : `registrations mode: ${mode}`;
      await this.log.record(actor, { action: "update", targetType: "Instance", targetId: null, summary });
    });
  }
}

function authorize(actor: StaffActor, permission: Permission): void {
  if (actor.kind === "staff" && !can(actor.role, permission)) throw forbidden();
}
