import { mentionHandles } from "../../text/format.ts";
import type { RemoteAccounts } from "./accounts.ts";

/** How long a post waits for the servers of the accounts it mentions to answer WebFinger. */
const RESOLVE_TIMEOUT_MS = 10_000;
/** A status of 500 characters names at most this many distinct handles worth looking up. */
const MAX_HANDLES = 50;

/**
 * Before a status is formatted (which cannot wait for the network), the `@user@domain`
 * mentions of other servers are resolved through WebFinger and stored, as Mastodon's
 * ProcessMentionsService resolves them while posting. An unknown or unreachable handle stays
 * plain text, as in Mastodon; the post is never refused for it.
 */
export class RemoteMentions {
  constructor(
    private remote: RemoteAccounts,
    /** This server's own domain: its handles are local mentions, nothing to resolve. */
    private domain: string,
  ) {}

  async resolve(text: string | undefined): Promise<void> {
    if (!text || !text.includes("@")) return;
    const handles = mentionHandles(text)
      .filter((h) => h.domain !== this.domain.toLowerCase())
      .slice(0, MAX_HANDLES);
    if (handles.length === 0) return;
    const signal = AbortSignal.timeout(RESOLVE_TIMEOUT_MS);
    await Promise.all(handles.map((h) => this.remote.lookup(h.username, h.domain, signal).catch(() => null)));
  }
}
