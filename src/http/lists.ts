import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { serializeAccount } from "../presenters/account.ts";
import { serializeList } from "../presenters/list.ts";
import type { ListInput } from "../services/lists.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { bool, pathId, str, strArray, type Params } from "./params.ts";
import { renderTimeline } from "./render.ts";

const READ = ["read:lists"] as const;
const WRITE = ["write:lists"] as const;

function listInput(p: Params): ListInput {
  const out: ListInput = {};
  const title = str(p.title, "title");
  if (title !== undefined) out.title = title;
  const policy = str(p.replies_policy, "replies_policy");
  if (policy !== undefined) out.repliesPolicy = policy;
  const exclusive = bool(p.exclusive, "exclusive");
  if (exclusive !== undefined) out.exclusive = exclusive;
  return out;
}

/** Ids from `account_ids[]`; one that cannot be an id can match no account. */
function accountIds(p: Params): number[] {
  return (strArray(p.account_ids, "account_ids") ?? []).map((s) => parseId(s) ?? -1);
}

/** Lists, their members and their timelines; the caller's own only. */
export function listRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia()
    .get("/api/v1/lists", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      return (await services.lists.all(auth.accountId)).map(serializeList);
    })
    .post("/api/v1/lists", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      return serializeList(await services.lists.create(auth.accountId, listInput(input(c))));
    })
    .get("/api/v1/lists/:id", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      return serializeList(await services.lists.own(auth.accountId, pathId(c.params.id)));
    })
    .put("/api/v1/lists/:id", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      return serializeList(await services.lists.update(auth.accountId, pathId(c.params.id), listInput(input(c))));
    })
    .delete("/api/v1/lists/:id", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      await services.lists.remove(auth.accountId, pathId(c.params.id));
      return {};
    })
    .get("/api/v1/lists/:id/accounts", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      const p = input(c);
      // limit=0 means every member, with no Link header (Mastodon's unlimited? case).
      const unlimited = str(p.limit, "limit") !== undefined && pageParams(p, 40, 80).limit === 0;
      const page = unlimited ? { limit: 1_000_000 } : pageParams(p, 40, 80);
      const rows = await services.lists.members(auth.accountId, pathId(c.params.id), page);
      if (!unlimited && rows.length > 0) {
        const link = linkHeader(ctx.config.publicUrl, c.request, {
          next: rows.length >= page.limit ? rows[rows.length - 1]!.cursor : null,
          prev: rows[0]!.cursor,
          prevKey: "since_id",
        });
        if (link) c.set.headers.link = link;
      }
      return (await services.accounts.showMany(rows.map((r) => r.account))).map((account) => serializeAccount(ctx.urls, account));
    })
    .post("/api/v1/lists/:id/accounts", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      await services.lists.addMembers(auth.accountId, pathId(c.params.id), accountIds(input(c)));
      return {};
    })
    .delete("/api/v1/lists/:id/accounts", async (c) => {
      const auth = requireUser(ctx, c.request, WRITE);
      await services.lists.removeMembers(auth.accountId, pathId(c.params.id), accountIds(input(c)));
      return {};
    })
    .get("/api/v1/accounts/:id/lists", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      const accountId = pathId(c.params.id);
      if (!(await services.accounts.get(accountId))) throw notFound();
      return (await services.lists.containing(auth.accountId, accountId)).map(serializeList);
    })
    .get("/api/v1/timelines/list/:id", async (c) => {
      const auth = requireUser(ctx, c.request, READ);
      const page = await services.timelines.list(auth.accountId, pathId(c.params.id), pageParams(input(c), 20, 40));
      return renderTimeline(ctx, c.request, page, auth.accountId, true);
    });
}
