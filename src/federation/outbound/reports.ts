import { Flag } from "@fedify/fedify/vocab";
import type { EventBus } from "../../infra/events.ts";
import type { Outbound } from "./index.ts";
import { recipientOf } from "./sender.ts";

/**
 * A report of a remote account that its reporter asked to forward goes to that account's
 * server as Mastodon sends it (ReportService#forward_to_origin!): a Flag from the instance
 * actor (the reporter stays anonymous), naming the account and the reported statuses, with
 * the comment as content, delivered to the account's inbox.
 */
export function reports(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  const { services, context: ctx, instanceIdentifier, sender } = out;
  events.afterCommit("report.created", (e) => {
    // Read back inside the send (the report is committed): a failure is the send's, logged.
    sender.send("Flag", async () => {
      const view = await services.reports.find(e.reportId);
      if (!view?.report.forwarded || view.target.uri === null || view.target.inboxUrl === null) return;
      const statusUris = (await Promise.all(view.statusIds.map((id) => services.reader.findRow(id)))).flatMap((row) => row?.uri ?? []);
      const c = ctx();
      const flag = new Flag({
        id: new URL(view.report.uri),
        actor: c.getActorUri(instanceIdentifier),
        content: view.report.comment,
        objects: [new URL(view.target.uri), ...statusUris.map((u) => new URL(u))],
      });
      await c.sendActivity({ identifier: instanceIdentifier }, recipientOf(view.target), flag);
    });
  });
}
