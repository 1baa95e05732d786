import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { serializeStatusEdit } from "../presenters/status-edit.ts";
import type { EditInput } from "../services/statuses/editing.ts";
import { optionalUser, requireToken, requireUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { bool, obj, str, strArray, type ParamValue, type Params } from "./params.ts";
import { renderStatus } from "../presenters/status-json.ts";
import { statusInput } from "./statuses.ts";

/** `media_attributes[]`: an array of hashes, or Rails' indexed hash of them. */
function mediaAttributes(v: ParamValue | undefined): EditInput["mediaAttributes"] {
  if (v === undefined || v === null) return undefined;
  return (Array.isArray(v) ? v : Object.values(obj(v, "media_attributes")!)).flatMap((item) => {
    const o = obj(item, "media_attributes");
    const id = o ? str(o.id, "media_attributes[id]") : undefined;
    return o && id ? [{ id, description: str(o.description, "media_attributes[description]"), focus: str(o.focus, "media_attributes[focus]") }] : [];
  });
}

function editInput(p: Params): EditInput {
  const fields = statusInput(p);
  return {
    text: fields.text,
    spoilerText: fields.spoilerText,
    sensitive: bool(p.sensitive, "sensitive"),
    language: str(p.language, "language"),
    mediaIds: strArray(p.media_ids, "media_ids"),
    mediaAttributes: mediaAttributes(p.media_attributes),
    poll: fields.poll,
    quotePolicy: fields.quotePolicy,
  };
}

/** Status edits (Mastodon 3.5): PUT a new version, read the versions and the source. */
export function statusEditRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  return new Elysia()
    .put("/api/v1/statuses/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      const p = input(c);
      const row = await services.statusCommands.edit(auth.accountId, parseId(c.params.id), editInput(p));
      return renderStatus(services, urls, row, auth.accountId);
    })
    .get("/api/v1/statuses/:id/history", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const row = await services.reader.visibleRow(parseId(c.params.id), viewer);
      if (row.reblogOfId !== null) throw notFound();
      const author = await services.accounts.get(row.accountId);
      if (!author) throw notFound();
      const history = await services.editing.history(row);
      // The status keeps its current version's emojis; a local status's older versions may have
      // used others of this server's, looked up by the shortcodes they name.
      const known = JSON.parse(row.emojis) as { shortcode: string }[];
      const local = row.uri === null ? await services.customEmojis.inTexts(history.flatMap((v) => [v.spoilerText, v.contentHtml, v.pollOptions ?? ""])) : [];
      const emojis = [...known, ...local.filter((e) => !known.some((k) => k.shortcode === e.shortcode))];
      const shown = await services.accounts.show(author);
      return history.map((v) => serializeStatusEdit(urls, shown, v, emojis));
    })
    .get("/api/v1/statuses/:id/source", async (c) => {
      const auth = requireToken(ctx, c.request, "read:statuses");
      const row = await services.reader.visibleRow(parseId(c.params.id), auth.accountId);
      return { id: String(row.id), text: row.text, spoiler_text: row.spoilerText };
    });
}
