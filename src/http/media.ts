import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { parseId } from "../ids.ts";
import { serializeAttachment } from "../presenters/media.ts";
import type { MediaInput } from "../services/media/media-input.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { file, str, type Params } from "./params.ts";

function mediaInput(p: Params): MediaInput {
  return { file: file(p.file, "file"), thumbnail: file(p.thumbnail, "thumbnail"), description: str(p.description, "description"), focus: str(p.focus, "focus") };
}

/** Uploads (v1 processed at once, v2 in the background), and the attachment before it is posted. */
export function mediaRoutes(ctx: AppContext) {
  const { services, urls } = ctx;
  const render = (set: { status?: number | string }, result: { row: Parameters<typeof serializeAttachment>[1]; ready: boolean }) => {
    if (!result.ready) set.status = 206;
    return serializeAttachment(urls, result.row);
  };
  return new Elysia()
    .post("/api/v1/media", async (c) => {
      const auth = requireUser(ctx, c.request, "write:media");
      const row = await services.media.upload(auth.accountId, mediaInput(input(c)), { background: false });
      return serializeAttachment(urls, row);
    })
    .post("/api/v2/media", async (c) => {
      const auth = requireUser(ctx, c.request, "write:media");
      const row = await services.media.upload(auth.accountId, mediaInput(input(c)), { background: true });
      c.set.status = 202;
      // The spec: 202 with url null, whether or not the queue has already finished.
      return { ...serializeAttachment(urls, row), url: null };
    })
    .get("/api/v1/media/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "write:media");
      return render(c.set, await services.media.show(auth.accountId, parseId(c.params.id)));
    })
    .put("/api/v1/media/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "write:media");
      return render(c.set, await services.media.update(auth.accountId, parseId(c.params.id), mediaInput(input(c))));
    })
    .delete("/api/v1/media/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "write:media");
      await services.media.remove(auth.accountId, parseId(c.params.id));
      return {};
    });
}
