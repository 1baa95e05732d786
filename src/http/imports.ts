import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import { serializeImport } from "../presenters/import.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { file, str } from "./params.ts";

/**
 * GoToSocial's POST /api/v1/import (multipart: `data`, `type`, `mode`): the file is checked
 * and queued, and the answer comes at once (202); the entries are worked off in the
 * background. Its progress and report: GET /api/v1/imports and /api/v1/imports/:id (ours).
 */
export function importRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia()
    .post("/api/v1/import", async (c) => {
      const auth = requireUser(ctx, c.request, "write");
      const p = input(c);
      const data = file(p.data, "data");
      const view = await services.imports.submit(auth.accountId, {
        type: str(p.type, "type"),
        mode: str(p.mode, "mode"),
        data: data ? new Uint8Array(await data.arrayBuffer()) : null,
      });
      c.set.status = 202;
      return { status: "accepted", id: String(view.id) };
    })
    .get("/api/v1/imports", async (c) => {
      const auth = requireUser(ctx, c.request, "read:accounts");
      return (await services.imports.list(auth.accountId)).map(serializeImport);
    })
    .get("/api/v1/imports/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "read:accounts");
      return serializeImport(await services.imports.show(auth.accountId, parseId(c.params.id)));
    });
}
