import type { NotificationRow, StatusRow } from "../db/schema.ts";
import { log } from "../log.ts";

/**
 * Everything that happened, announced once by the service that did it, after its
 * transaction committed. Notifications, streaming and the publishers of later features
 * listen here; no route emits.
 */
export type DomainEvent =
  | { type: "follow.created"; accountId: number; targetAccountId: number }
  | { type: "follow_request.created"; accountId: number; targetAccountId: number }
  | { type: "follow_request.authorized"; accountId: number; targetAccountId: number }
  | { type: "follow.removed"; accountId: number; targetAccountId: number }
  /** A status or boost was published; `homeRecipients` are the home feeds it went into. */
  | { type: "status.created"; status: StatusRow; homeRecipients: number[] }
  /** A status or boost is gone; `homeRecipients` and `listIds` are the feeds that held it. */
  | { type: "status.deleted"; status: StatusRow; homeRecipients: number[]; listIds: number[] }
  /** A status was edited; the feeds that hold it, as for a deletion. */
  | { type: "status.updated"; status: StatusRow; homeRecipients: number[]; listIds: number[] }
  | { type: "notification.created"; notification: NotificationRow }
  /** Lists whose timelines a new status went into (streams of those lists are told). */
  | { type: "list.delivered"; status: StatusRow; listIds: number[] }
  | { type: "conversation.updated"; accountId: number; conversationId: number }
  | { type: "filters.changed"; accountId: number };

type Listener<T extends DomainEvent["type"]> = (event: Extract<DomainEvent, { type: T }>) => void;

export class EventBus {
  private listeners = new Map<string, Set<(event: DomainEvent) => void>>();

  on<T extends DomainEvent["type"]>(type: T, listener: Listener<T>): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener as (event: DomainEvent) => void);
    return () => set.delete(listener as (event: DomainEvent) => void);
  }

  emit(event: DomainEvent) {
    const set = this.listeners.get(event.type);
    if (!set) return;
    for (const listener of set) {
      try {
        listener(event);
      } catch (e) {
        // One failing listener (a broken stream) must not undo or block the others.
        log("error", "event listener failed", { event: event.type, error: String(e) });
      }
    }
  }
}
