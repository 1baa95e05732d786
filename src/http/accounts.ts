import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError, notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { parseScopes } from "../auth/scopes.ts";
import { serializeAccount, serializeCredentialAccount } from "../presenters/account.ts";
import { serializeRelationship } from "../presenters/relationship.ts";
import type { CredentialsUpdate } from "../services/accounts/accounts.ts";
import { optionalUser, requireToken, requireUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { pageParams } from "./pagination.ts";
import { bool, file, obj, pathId, str, strArray, type ParamValue, type Params } from "./params.ts";
import { renderAccountList } from "./render.ts";
import { answerKept, keep, type Kept } from "./kept-json.ts";

/** `fields_attributes` as an indexed hash (Mastodon's form) or, leniently, as an array. */
function fieldsParam(v: ParamValue | undefined): CredentialsUpdate["fields"] {
  if (v === undefined || v === null) return undefined;
  const list = Array.isArray(v) ? v : Object.values(obj(v, "fields_attributes")!);
  return list.map((f) => {
    const o = obj(f, "fields_attributes") ?? {};
    return { name: str(o.name, "fields_attributes[name]"), value: str(o.value, "fields_attributes[value]") };
  });
}

const accountIdParam = (params: { id?: string }) => pathId(params.id);

export function accountRoutes(ctx: AppContext) {
  const { services, urls } = ctx;

  const credentialAccount = async (accountId: number) => {
    const [account, user] = await Promise.all([services.accounts.get(accountId), services.accounts.getUser(accountId)]);
    if (!account || !user) throw notFound();
    const [shown, waiting] = await Promise.all([services.accounts.show(account), services.follows.pendingRequestCount(accountId, 40)]);
    return serializeCredentialAccount(urls, shown, user, waiting);
  };
  // verify_credentials, the same for every token of an account until the database changes: its
  // bytes kept per account (the latest generation only; bounded, as accounts signed in are).
  const databaseNow = ctx.databaseGeneration;
  const keptCredentials = new Map<number, Kept>();
  const KEPT_ACCOUNTS = 10_000;
  const keepCredentials = async (request: Request, accountId: number, generation: string) => {
    const entity = await credentialAccount(accountId);
    const kept = keep(undefined, generation, () => entity);
    if (keptCredentials.size >= KEPT_ACCOUNTS && !keptCredentials.has(accountId)) keptCredentials.clear();
    keptCredentials.set(accountId, kept);
    return answerKept(request, kept);
  };

  return new Elysia()
    .post("/api/v1/accounts", async (c) => {
      const auth = requireToken(ctx, c.request, "write:accounts");
      const p = input(c);
      // Under REGISTRATIONS=approval the token is issued as Mastodon issues it; the account's
      // requests are refused until staff approve it (requireUser).
      const account = await services.registrations.signUp({
        username: str(p.username, "username"),
        email: str(p.email, "email"),
        password: str(p.password, "password"),
        // Mastodon accepts exactly true, "true" or "1" here.
        agreement: p.agreement === true || p.agreement === "true" || p.agreement === "1",
        locale: str(p.locale, "locale"),
        reason: str(p.reason, "reason"),
        inviteCode: str(p.invite_code, "invite_code"),
      });
      const app = await services.applications.findById(auth.applicationId);
      const scopes = parseScopes(app?.scopes);
      const { accessToken, auth: issued } = await services.tokens.issue(auth.applicationId, account.id, scopes);
      return { access_token: accessToken, token_type: "Bearer", scope: scopes.join(" "), created_at: Math.floor(issued.createdAt / 1000) };
    })
    .get("/api/v1/accounts/verify_credentials", (c) => {
      const auth = requireUser(ctx, c.request, ["read:accounts", "profile"]);
      const generation = databaseNow();
      const held = keptCredentials.get(auth.accountId);
      // No-store as every API answer (src/http/edge.ts); the ETag still spares the bytes. The
      // kept bytes answer without a promise: nothing to await.
      if (held !== undefined && held.generation === generation) return answerKept(c.request, held);
      return keepCredentials(c.request, auth.accountId, generation);
    })
    .patch("/api/v1/accounts/update_credentials", async (c) => {
      const auth = requireUser(ctx, c.request, "write:accounts");
      const p = input(c);
      const source = obj(p.source, "source") ?? {};
      await services.accounts.updateCredentials(auth.accountId, {
        displayName: str(p.display_name, "display_name"),
        note: str(p.note, "note"),
        locked: bool(p.locked, "locked"),
        bot: bool(p.bot, "bot"),
        discoverable: bool(p.discoverable, "discoverable"),
        hideCollections: bool(p.hide_collections, "hide_collections"),
        indexable: bool(p.indexable, "indexable"),
        fields: fieldsParam(p.fields_attributes),
        avatar: file(p.avatar, "avatar"),
        header: file(p.header, "header"),
        privacy: str(source.privacy, "source[privacy]"),
        sensitive: bool(source.sensitive, "source[sensitive]"),
        language: str(source.language, "source[language]"),
        quotePolicy: str(source.quote_policy, "source[quote_policy]"),
      });
      return await credentialAccount(auth.accountId);
    })
    .get("/api/v1/accounts/relationships", async (c) => {
      const auth = requireUser(ctx, c.request, "read:follows");
      const ids = [...new Set((strArray(input(c).id, "id") ?? []).map(parseId).filter((id): id is number => id !== null))];
      const existing = new Set((await services.accounts.getMany(ids)).map((a) => a.id));
      return (await services.follows.relationships(auth.accountId, ids.filter((id) => existing.has(id)))).map(serializeRelationship);
    })
    .get("/api/v1/accounts/lookup", async (c) => {
      optionalUser(ctx, c.request, "read:accounts");
      const acct = (str(input(c).acct, "acct") ?? "").trim().replace(/^@/, "");
      const [username, domain] = acct.split("@");
      if (!username) throw notFound();
      const remote = domain !== undefined && domain.toLowerCase() !== ctx.config.domain.toLowerCase();
      const account = remote ? await services.remoteAccounts.lookup(username, domain) : await services.accounts.getLocal(username);
      if (!account) throw notFound();
      return serializeAccount(urls, await services.accounts.show(account));
    })
    .get("/api/v1/accounts", async (c) => {
      optionalUser(ctx, c.request, "read:accounts");
      const raw = strArray(input(c).id, "id") ?? [];
      if (raw.length > 40) throw new ApiError(422, "Mastodon::ValidationError");
      const ids = raw.map(parseId).filter((id): id is number => id !== null);
      const byId = new Map((await services.accounts.showByIds(ids)).map((a) => [a.id, a]));
      return ids.flatMap((id) => (byId.has(id) ? [serializeAccount(urls, byId.get(id)!)] : []));
    })
    .get("/api/v1/accounts/familiar_followers", async (c) => {
      const auth = requireUser(ctx, c.request, "read:follows");
      const ids = [...new Set((strArray(input(c).id, "id") ?? []).slice(0, 40).map(parseId).filter((id): id is number => id !== null))];
      // In the order asked for, as Mastodon answers (not the database's order).
      const byId = new Map((await services.accounts.getMany(ids)).map((a) => [a.id, a]));
      const targets = ids.flatMap((id) => byId.get(id) ?? []);
      const familiar = await services.follows.familiarFollowers(auth.accountId, targets);
      // Every target's followers shown at once: those that moved, with where to.
      const shown = new Map((await services.accounts.showMany([...familiar.values()].flat())).map((a) => [a.id, a]));
      return targets.map((t) => ({ id: String(t.id), accounts: (familiar.get(t.id) ?? []).map((a) => serializeAccount(urls, shown.get(a.id)!)) }));
    })
    .get("/api/v1/accounts/:id", async (c) => {
      optionalUser(ctx, c.request, "read:accounts");
      const account = await services.accounts.get(accountIdParam(c.params));
      if (!account) throw notFound();
      // A remote account shown a day after its last fetch is fetched again, without waiting.
      services.remoteAccounts.refreshIfStale(account);
      return serializeAccount(urls, await services.accounts.show(account));
    })
    .post("/api/v1/accounts/:id/follow", async (c) => {
      const auth = requireUser(ctx, c.request, "write:follows");
      const p: Params = input(c);
      const languages = p.languages === undefined ? undefined : (strArray(p.languages, "languages") ?? null);
      const rel = await services.follows.follow(auth.accountId, accountIdParam(c.params), {
        reblogs: bool(p.reblogs, "reblogs"),
        notify: bool(p.notify, "notify"),
        languages: languages && languages.length === 0 ? null : languages,
      });
      return serializeRelationship(rel);
    })
    .post("/api/v1/accounts/:id/unfollow", async (c) => {
      const auth = requireUser(ctx, c.request, "write:follows");
      return serializeRelationship(await services.follows.unfollow(auth.accountId, accountIdParam(c.params)));
    })
    .get("/api/v1/accounts/:id/followers", (c) => followList(c, "followers"))
    .get("/api/v1/accounts/:id/following", (c) => followList(c, "following"));

  async function followList(c: { request: Request; params: { id?: string }; set: any; body?: unknown }, direction: "followers" | "following") {
    const auth = optionalUser(ctx, c.request, "read:accounts");
    const account = await services.accounts.get(accountIdParam(c.params));
    if (!account) throw notFound();
    const viewer = viewerId(auth);
    const page = pageParams(input(c), 40, 80);
    // Hidden collections are empty to everyone but their owner, as in Mastodon.
    if (account.hideCollections && viewer !== account.id) return [];
    const blocks = viewer !== null ? await services.moderation.blocked(viewer, [account.id]) : null;
    if (blocks?.blockedBy.has(account.id)) return [];
    const rows = await services.follows.listFollows(account.id, direction, page, viewer !== null && viewer !== account.id ? await services.moderation.hiddenAccounts(viewer) : new Set());
    return renderAccountList(ctx, c.request, c.set, rows, page.limit);
  }
}
