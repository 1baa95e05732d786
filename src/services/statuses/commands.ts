import type { GroupCommit } from "../../infra/group-commit.ts";
import type { StatusRow } from "../../db/schema.ts";
import type { AccountService } from "../accounts/accounts.ts";
import type { StatusActionService } from "./actions.ts";
import type { EditInput, EditingService } from "./editing.ts";
import type { RemoteMentions } from "../remote/mentions.ts";
import type { PollService } from "./polls.ts";
import type { StatusReader } from "./reader.ts";
import type { StatusView } from "../../models/views.ts";
import type { RemovalService } from "./removal.ts";
import type { QuoteService } from "../quotes/quotes.ts";

/** POST /api/v1/statuses/:id/<action>. */
export type StatusActionName =
  | "favourite"
  | "unfavourite"
  | "reblog"
  | "unreblog"
  | "bookmark"
  | "unbookmark"
  | "mute"
  | "unmute"
  | "pin"
  | "unpin";

/**
 * The writes on existing statuses that routes ask for: actions, deletion, votes, edits.
 * Each is one item of the group commit; the services it calls validate and emit the
 * events inside it. Each answers with what the route presents, read after the change.
 */
export class StatusCommands {
  constructor(
    private writes: GroupCommit,
    private reader: StatusReader,
    private accounts: AccountService,
    private actions: StatusActionService,
    private removal: RemovalService,
    private polls: PollService,
    private editing: EditingService,
    private remoteMentions: RemoteMentions,
    private quotes: QuoteService,
  ) {}

  /** Favourite, boost, bookmark, mute, pin or an undo; the status with its counters as they are now. */
  act(action: StatusActionName, actorId: number, statusId: number | null, options: { visibility?: string } = {}): Promise<StatusRow> {
    return this.writes.run(async () => {
      const row = await this.perform(action, actorId, statusId, options);
      return (await this.reader.findRow(row.id)) ?? row;
    });
  }

  private perform(action: StatusActionName, actorId: number, statusId: number | null, options: { visibility?: string }): Promise<StatusRow> {
    const a = this.actions;
    switch (action) {
      case "favourite":
        return a.favourite(actorId, statusId);
      case "unfavourite":
        return a.unfavourite(actorId, statusId);
      case "reblog":
        return a.reblog(actorId, statusId, options.visibility);
      case "unreblog":
        return a.unreblog(actorId, statusId);
      case "bookmark":
        return a.bookmark(actorId, statusId);
      case "unbookmark":
        return a.unbookmark(actorId, statusId);
      case "mute":
        return a.muteThread(actorId, statusId);
      case "unmute":
        return a.unmuteThread(actorId, statusId);
      case "pin":
        return a.pin(actorId, statusId);
      case "unpin":
        return a.unpin(actorId, statusId);
    }
  }

  /**
   * Deletes the caller's own status. Answers the status as it was (its source text, media
   * and poll are what a delete-and-redraft needs), no longer pinned, with its author as
   * they are after the deletion.
   */
  delete(accountId: number, statusId: number | null): Promise<StatusView> {
    return this.writes.run(async () => {
      const row = await this.actions.ownStatus(accountId, statusId);
      const view = await this.reader.view(row, accountId);
      await this.removal.remove(row);
      const author = await this.accounts.get(row.accountId);
      return {
        ...view,
        account: author ? await this.accounts.show(author) : view.account,
        viewer: view.viewer && { ...view.viewer, pinned: false },
      };
    });
  }

  /** Votes in a poll; the poll's status. */
  vote(actorId: number, pollId: number | null, choices: string[] | undefined): Promise<StatusRow> {
    return this.writes.run(() => this.polls.vote(actorId, pollId, choices));
  }

  /** The quoted status's author takes back a quote of it; the quoting status, as it is now. */
  revokeQuote(accountId: number, quotedStatusId: number | null, quotingStatusId: number | null): Promise<StatusRow> {
    return this.writes.run(() => this.quotes.revoke(accountId, quotedStatusId, quotingStatusId));
  }

  /** Who may quote the caller's own status (PUT .../interaction_policy); the status as it is now. */
  changeQuotePolicy(accountId: number, statusId: number | null, policy: string | undefined): Promise<StatusRow> {
    return this.writes.run(() => this.editing.changeQuotePolicy(accountId, statusId, policy));
  }

  /** Edits the caller's own status; the new version. */
  async edit(accountId: number, statusId: number | null, input: EditInput): Promise<StatusRow> {
    await this.remoteMentions.resolve(input.text);
    return this.writes.run(() => this.editing.edit(accountId, statusId, input));
  }
}
