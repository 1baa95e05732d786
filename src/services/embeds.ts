import type { AccountConversationRow, NotificationRow } from "../db/schema.ts";
import type { AccountView, Embeds, NotificationGroup, NotificationRequest, ReportView } from "../models/views.ts";
import type { AccountService } from "./accounts/accounts.ts";
import type { ReportService } from "./reports.ts";
import type { StatusReader } from "./statuses/reader.ts";

/**
 * What notifications (flat, grouped, or held back as requests) and conversations show besides
 * themselves, loaded for a whole page (Embeds): the accounts they name, with those that moved
 * and where to, and the statuses they name, of which only those the viewer may see. Deciding
 * that here, before anything is rendered, leaves the presenters to render what they are given.
 */
export class EmbedLoader {
  constructor(
    private accounts: AccountService,
    private reader: StatusReader,
    private reports: ReportService,
  ) {}

  async notifications(rows: NotificationRow[], viewerId: number): Promise<Embeds> {
    const reports = await this.reportsById(rows);
    return { ...(await this.load(rows.map((n) => n.fromAccountId), rows.map((n) => n.statusId), viewerId)), reports };
  }

  async notificationGroups(groups: NotificationGroup[], viewerId: number): Promise<Embeds> {
    const rows = groups.map((g) => g.notification);
    const reports = await this.reportsById(rows);
    return { ...(await this.load(groups.flatMap((g) => g.sampleAccountIds), rows.map((n) => n.statusId), viewerId)), reports };
  }

  /** The reports of admin.report notifications (only staff are sent those). */
  private async reportsById(rows: NotificationRow[]): Promise<Map<number, ReportView>> {
    const out = new Map<number, ReportView>();
    for (const n of rows) {
      if (n.reportId === null || out.has(n.reportId)) continue;
      const view = await this.reports.find(n.reportId);
      if (view) out.set(n.reportId, view);
    }
    return out;
  }

  notificationRequests(rows: NotificationRequest[], viewerId: number): Promise<Embeds> {
    return this.load(rows.map((r) => r.fromAccountId), rows.map((r) => r.lastStatusId), viewerId);
  }

  /** The owner and the other participants; the last statuses as they are (the owner takes part in each). */
  async conversations(rows: AccountConversationRow[], ownerId: number): Promise<Embeds> {
    const participants = rows.flatMap((r) => JSON.parse(r.participantIds) as number[]);
    return { accounts: await this.accountsById([ownerId, ...participants]), statuses: await this.reader.rowsByIds([...new Set(rows.map((r) => r.lastStatusId))]) };
  }

  private async load(accountIds: number[], statusIds: (number | null)[], viewerId: number): Promise<Embeds> {
    const ids = [...new Set(statusIds.filter((id): id is number => id !== null))];
    return { accounts: await this.accountsById(accountIds), statuses: ids.length === 0 ? [] : await this.reader.visible(await this.reader.rowsByIds(ids), viewerId) };
  }

  private async accountsById(ids: number[]): Promise<Map<number, AccountView>> {
    return new Map((await this.accounts.showByIds([...new Set(ids)])).map((a) => [a.id, a]));
  }
}
