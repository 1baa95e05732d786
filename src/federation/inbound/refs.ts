import type { Context } from "@fedify/fedify";
import { Note } from "@fedify/fedify/vocab";
import type { IriRef } from "../../services/remote/inputs.ts";

/** An IRI as Fedify's router reads it: one of this server's actors or statuses, or another server's. */
export function refOf(ctx: Context<void>, iri: URL): IriRef {
  const parsed = ctx.parseUri(iri);
  return {
    href: iri.href,
    ours: iri.origin === ctx.origin,
    actor: parsed?.type === "actor" ? parsed.identifier : null,
    status: parsed?.type === "object" && parsed.class === Note ? { identifier: parsed.values.identifier ?? "", id: parsed.values.id ?? "" } : null,
  };
}

/** The identifier of the local actor an IRI names, if it names one. */
export function localActorOf(ctx: Context<void>, iri: URL): string | null {
  const parsed = ctx.parseUri(iri);
  return parsed?.type === "actor" ? parsed.identifier : null;
}
