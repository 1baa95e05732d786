import type { Db } from "../../db/connection.ts";
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
    private db: Db,
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
    if (added.created) this.log.record(actor, { action: "create", targetType: "Relay", targetId: added.relay.id, summary: added.relay.url });
    return added;
  }

  removeRelay(actor: StaffActor, url: string): RelayRow {
    authorize(actor, "manage_federation");
    return this.db.transaction(() => {
      const relay = this.relays.remove(url);
      if (!relay) throw notFound();
      this.log.record(actor, { action: "destroy", targetType: "Relay", targetId: relay.id, summary: relay.url });
      return relay;
    });
  }

  /** Admin::CustomEmojisController: manage_custom_emojis; checked as the CLI's `emoji add` checks it. */
  async addEmoji(actor: StaffActor, shortcode: string, image: Uint8Array, category?: string): Promise<CustomEmojiRow> {
    authorize(actor, "manage_custom_emojis");
    const row = await this.emojis.add(shortcode, image, { category });
    this.log.record(actor, { action: "create", targetType: "CustomEmoji", targetId: row.id, summary: row.shortcode });
    return row;
  }

  removeEmoji(actor: StaffActor, shortcode: string): void {
    authorize(actor, "manage_custom_emojis");
    const row = this.emojis.find(shortcode);
    if (!row) throw notFound();
    this.db.transaction(() => {
      void this.emojis.remove(shortcode);
      this.log.record(actor, { action: "destroy", targetType: "CustomEmoji", targetId: row.id, summary: row.shortcode });
    });
  }

  /** Admin::RulesController: manage_rules. */
  addRule(actor: StaffActor, text: string, hint?: string): InstanceRuleRow {
    authorize(actor, "manage_rules");
    return this.db.transaction(() => {
      const rule = this.info.addRule(text, hint);
      this.log.record(actor, { action: "create", targetType: "Rule", targetId: rule.id, summary: rule.text.slice(0, 80) });
      return rule;
    });
  }

  removeRule(actor: StaffActor, id: number | null): void {
    authorize(actor, "manage_rules");
    const rule = this.info.rules().find((r) => r.id === id);
    if (!rule) throw notFound();
    this.db.transaction(() => {
      this.info.removeRule(rule.id);
      this.log.record(actor, { action: "destroy", targetType: "Rule", targetId: rule.id, summary: rule.text.slice(0, 80) });
    });
  }

  /** Admin::AnnouncementsController: manage_announcements. */
  addAnnouncement(actor: StaffActor, input: AnnouncementInput): AnnouncementRow {
    authorize(actor, "manage_announcements");
    return this.db.transaction(() => {
      const row = this.announcements.create(input);
      this.log.record(actor, { action: "create", targetType: "Announcement", targetId: row.id, summary: row.text.slice(0, 80) });
      return row;
    });
  }

  removeAnnouncement(actor: StaffActor, id: number | null): void {
    authorize(actor, "manage_announcements");
    const row = this.announcements.all().find((a) => a.id === id);
    if (!row) throw notFound();
    this.db.transaction(() => {
      this.announcements.remove(row.id);
      this.log.record(actor, { action: "destroy", targetType: "Announcement", targetId: row.id, summary: row.text.slice(0, 80) });
    });
  }

  /** Admin::SettingsController (manage_settings): the extended description (the about page's text). */
  setDescription(actor: StaffActor, text: string): void {
    authorize(actor, "manage_settings");
    this.db.transaction(() => {
      this.info.setExtendedDescription(text);
      this.log.record(actor, { action: "update", targetType: "Instance", targetId: null, summary: "extended description" });
    });
  }

  /**
   * Admin::InvitesController#destroy (manage_invites): any member's invite expires now, logged as
   * Mastodon logs it. "expired": it had already (nothing to log); a missing invite is a 404.
   */
  revokeInvite(actor: StaffActor, id: number | null): "revoked" | "expired" {
    authorize(actor, "manage_invites");
    if (id === null) throw notFound();
    return this.db.transaction(() => {
      const listing = this.invites.listing(id);
      const result = listing ? this.invites.revoke(id) : null;
      if (!listing || result === null) throw notFound();
      const summary = `@${listing.maker}'s invite${listing.invite.comment ? `: ${listing.invite.comment.slice(0, 60)}` : ""}`;
      if (result === "revoked") this.log.record(actor, { action: "destroy", targetType: "Invite", targetId: id, summary });
      return result;
    });
  }

  /**
   * Admin::Settings::RegistrationsController (manage_settings): who may sign up, from now on,
   * over REGISTRATIONS; null gives the choice back to REGISTRATIONS. Mastodon does not log its
   * settings; here the mode is logged as the description is.
   */
  setRegistrationsMode(actor: StaffActor, mode: RegistrationsMode | null): void {
    authorize(actor, "manage_settings");
    this.db.transaction(() => {
      this.info.setRegistrationsMode(mode);
      const summary = mode === null ? `registrations mode: as REGISTRATIONS says (${this.info.registrationsSetting})` : `registrations mode: ${mode}`;
      this.log.record(actor, { action: "update", targetType: "Instance", targetId: null, summary });
    });
  }
}

function authorize(actor: StaffActor, permission: Permission): void {
  if (actor.kind === "staff" && !can(actor.role, permission)) throw forbidden();
}
