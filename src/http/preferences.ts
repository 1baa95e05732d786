import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import type { Marker, MarkerTimeline } from "../services/accounts/markers.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { obj, str, strArray } from "./params.ts";

function serializeMarkers(markers: Marker[]) {
  const out: Record<string, { last_read_id: string; version: number; updated_at: string }> = {};
  for (const m of markers) out[m.timeline] = { last_read_id: m.lastReadId, version: m.version, updated_at: new Date(m.updatedAt).toISOString() };
  return out;
}

/** The signed-in user's preferences and timeline read markers. */
export function preferenceRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia()
    .get("/api/v1/preferences", async (c) => {
      const auth = requireUser(ctx, c.request, "read:accounts");
      const user = await services.accounts.getUser(auth.accountId);
      if (!user) throw notFound();
      return {
        "posting:default:visibility": user.defaultPrivacy,
        "posting:default:sensitive": user.defaultSensitive,
        "posting:default:language": user.defaultLanguage ?? user.locale ?? null,
        "posting:default:quote_policy": user.defaultQuotePolicy,
        "reading:expand:media": "default",
        "reading:expand:spoilers": false,
        "reading:autoplay:gifs": false,
      };
    })
    .get("/api/v1/markers", async (c) => {
      const auth = requireUser(ctx, c.request, "read:statuses");
      return serializeMarkers(await services.markers.get(auth.accountId, strArray(input(c).timeline, "timeline") ?? []));
    })
    .post("/api/v1/markers", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      const p = input(c);
      const positions: Partial<Record<MarkerTimeline, string>> = {};
      for (const timeline of ["home", "notifications"] as const) {
        // Positions are status or notification ids; anything else is ignored.
        const id = str(obj(p[timeline], timeline)?.last_read_id, `${timeline}[last_read_id]`);
        if (id !== undefined && parseId(id) !== null) positions[timeline] = id;
      }
      return serializeMarkers(await services.markers.set(auth.accountId, positions));
    });
}
