import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { jsonResponse } from "../errors.ts";
import { parseId } from "../ids.ts";
import { serializeDomainAllow, serializeDomainBlock } from "../presenters/admin.ts";
import { ExistingDomainBlock } from "../services/admin/domains.ts";
import { requireStaff } from "./admin-accounts.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { str } from "./params.ts";

/**
 * Mastodon's admin API for domain blocks and allows (Api::V1::Admin::DomainBlocksController,
 * DomainAllowsController), with admin:read / admin:write and their :domain_blocks and
 * :domain_allows scopes, for roles that manage federation.
 */
export function adminDomainRoutes(ctx: AppContext) {
  const domains = ctx.services.adminDomains;
  const scope = (kind: "read" | "write", what: "domain_blocks" | "domain_allows") => (request: Request) => requireStaff(ctx, request, `admin:${kind}:${what}`);
  const link = (request: Request, set: { headers: Record<string, string | number> }, rows: { id: number }[], limit: number) => {
    if (rows.length === 0) return;
    const header = linkHeader(ctx.config.publicUrl, request, { next: rows.length >= limit ? rows[rows.length - 1]!.id : null, prev: rows[0]!.id });
    if (header) set.headers.link = header;
  };
  const blocks = { read: scope("read", "domain_blocks"), write: scope("write", "domain_blocks") };
  const allows = { read: scope("read", "domain_allows"), write: scope("write", "domain_allows") };

  return new Elysia()
    .get("/api/v1/admin/domain_blocks", async (c) => {
      const actor = await blocks.read(c.request);
      const page = pageParams(input(c), 100, 200);
      const rows = await domains.blocks(actor, page);
      link(c.request, c.set, rows, page.limit);
      return rows.map(serializeDomainBlock);
    })
    .get("/api/v1/admin/domain_blocks/:id", async (c) => serializeDomainBlock(await domains.block(await blocks.read(c.request), parseId(c.params.id))))
    .post("/api/v1/admin/domain_blocks", async (c) => {
      const actor = await blocks.write(c.request);
      const p = input(c);
      try {
        return serializeDomainBlock(await domains.createBlock(actor, { domain: str(p.domain, "domain"), severity: str(p.severity, "severity") }));
      } catch (e) {
        // REST::Admin::ExistingDomainBlockErrorSerializer: the words, and the block in force.
        if (e instanceof ExistingDomainBlock) return jsonResponse({ error: e.message, existing_domain_block: serializeDomainBlock(e.block) }, 422);
        throw e;
      }
    })
    .put("/api/v1/admin/domain_blocks/:id", async (c) => {
      const actor = await blocks.write(c.request);
      return serializeDomainBlock(await domains.updateBlock(actor, parseId(c.params.id), { severity: str(input(c).severity, "severity") }));
    })
    .delete("/api/v1/admin/domain_blocks/:id", async (c) => {
      await domains.removeBlock(await blocks.write(c.request), parseId(c.params.id));
      return {};
    })
    .get("/api/v1/admin/domain_allows", async (c) => {
      const actor = await allows.read(c.request);
      const page = pageParams(input(c), 100, 200);
      const rows = await domains.allows(actor, page);
      link(c.request, c.set, rows, page.limit);
      return rows.map(serializeDomainAllow);
    })
    .get("/api/v1/admin/domain_allows/:id", async (c) => serializeDomainAllow(await domains.allow(await allows.read(c.request), parseId(c.params.id))))
    .post("/api/v1/admin/domain_allows", async (c) => serializeDomainAllow(await domains.createAllow(await allows.write(c.request), { domain: str(input(c).domain, "domain") })))
    .delete("/api/v1/admin/domain_allows/:id", async (c) => {
      await domains.removeAllow(await allows.write(c.request), parseId(c.params.id));
      return {};
    });
}
