import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { can } from "../models/roles.ts";
import { AV_MIME_TYPES, LIMITS, SUPPORTED_MIME_TYPES } from "../limits.ts";
import { VIDEO_FRAME_RATE_LIMIT, VIDEO_MATRIX_LIMIT, VIDEO_SIZE_LIMIT } from "../media-files/video.ts";
import { accountUri, accountUrl } from "../presenters/account.ts";
import { INSTANCE_DESCRIPTION } from "../services/instance-keys.ts";
import type { InstanceStats } from "../services/instance-info.ts";
import { serializeRule, serializeWeek } from "../presenters/instance.ts";
import { serializeCustomEmoji } from "../presenters/custom-emoji.ts";
import { ROOKERY_VERSION, VERSION_STRING } from "../version.ts";
import { input } from "./input.ts";
import { optionalUser } from "./auth.ts";
import { str } from "./params.ts";
import type { RegistrationsMode } from "../services/accounts/registrations.ts";
import { answerKept, keepAsync, type Kept } from "./kept-json.ts";

const DISCOVERY_CACHE = "max-age=259200, public";

/** The instance documents clients read at login, and the discovery documents around them. */
export function instanceRoutes(ctx: AppContext) {
  const { config, services } = ctx;
  const streamingUrl = config.publicUrl.replace(/^http/, "ws");
  const thumbnail = `${config.publicUrl}/avatars/original/missing.png`;
  const description = INSTANCE_DESCRIPTION;

  const statuses = { max_characters: LIMITS.statusCharacters, max_media_attachments: LIMITS.mediaAttachments, characters_reserved_per_url: LIMITS.charactersReservedPerUrl };
  // Video and audio limits only where ffmpeg was found (zero, and no such types, where not).
  const withAv = {
    supported_mime_types: [...SUPPORTED_MIME_TYPES, ...AV_MIME_TYPES],
    image_size_limit: LIMITS.imageSizeLimit,
    image_matrix_limit: LIMITS.imageMatrixLimit,
    video_size_limit: VIDEO_SIZE_LIMIT,
    video_frame_rate_limit: VIDEO_FRAME_RATE_LIMIT,
    video_matrix_limit: VIDEO_MATRIX_LIMIT,
  };
  const withoutAv = { ...withAv, supported_mime_types: SUPPORTED_MIME_TYPES, video_size_limit: 0, video_frame_rate_limit: 0, video_matrix_limit: 0 };
  const mediaAttachments = () => (services.media.avSupported ? withAv : withoutAv);
  const polls = {
    max_options: LIMITS.pollOptions,
    max_characters_per_option: LIMITS.pollOptionCharacters,
    min_expiration: LIMITS.pollMinExpiration,
    max_expiration: LIMITS.pollMaxExpiration,
  };

  // The instance actor (src/federation/instance-actor.ts), which signs fetches: servers that
  // verify such a signature look its key's owner up by WebFinger (GoToSocial does).
  const instanceActor = config.federation ? new URL(config.publicUrl).hostname : null;
  const instanceWebfinger = (name: string) => ({
    subject: `acct:${name}@${config.domain}`,
    aliases: [`${config.publicUrl}/users/${name}`],
    links: [{ rel: "self", type: "application/activity+json", href: `${config.publicUrl}/users/${name}` }],
  });
  const webfinger = (username: string) => ({
    subject: `acct:${username}@${config.domain}`,
    aliases: [accountUrl(ctx.urls, username), accountUri(ctx.urls, username)],
    links: [
      { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: accountUrl(ctx.urls, username) },
      { rel: "self", type: "application/activity+json", href: accountUri(ctx.urls, username) },
    ],
  });

  const rules = async () => (await services.instanceInfo.rules()).map(serializeRule);
  /** What the documents show of the database besides the counts, read when they are rebuilt. */
  const stored = async () => ({ mode: await services.registrations.mode(), rules: (await services.instanceInfo.rules()).map(serializeRule), stats: await services.instanceInfo.stats() });
  /**
   * Under WHITELIST_MODE, what servers this one knows and how busy it is are nobody's to read,
   * as Mastodon's require_enabled_api! has it in LIMITED_FEDERATION_MODE: a user is required
   * (401, as for every read in that mode), and even then there is nothing (404, no body).
   */
  const closedInWhitelistMode = (request: Request): Response | null => {
    if (!config.whitelistMode) return null;
    optionalUser(ctx, request);
    return new Response(null, { status: 404 });
  };

  /**
   * Under WHITELIST_MODE nothing about the instance is read without a user, as Mastodon's
   * instance controllers skip require_authenticated_user! only outside limited federation mode
   * (the sign-in pages need none of it). Outside it, no token is looked at.
   */
  const userInWhitelistMode = (request: Request) => {
    if (config.whitelistMode) optionalUser(ctx, request);
  };

  // Mastodon's InstancesController: expires_in 3.minutes, public (for members only under
  // WHITELIST_MODE, where a user is required to read it).
  const instanceCache = config.whitelistMode ? "max-age=180, private" : "max-age=180, public";
  // What outside the database shapes the documents: whether ffmpeg was found. (The registrations
  // mode is the saved one, in the database, else REGISTRATIONS, which a process never changes.)
  // On SQLite the database's generation is at hand, and a kept document is answered without an
  // await (an async route costs Elysia a few µs more per request); on PostgreSQL it is a round trip.
  const generation = (): string | Promise<string> => {
    const database = ctx.databaseGeneration();
    return typeof database === "string" ? `${database}.${services.media.avSupported}` : database.then((g) => `${g}.${services.media.avSupported}`);
  };
  let keptV1: Kept | undefined;
  let keptV2: Kept | undefined;
  /** The kept document of `generation` answered at once when it is current, else built anew (then kept). */
  const answer = (request: Request, kept: Kept | undefined, build: () => Promise<unknown>, save: (k: Kept) => void): Response | Promise<Response> => {
    userInWhitelistMode(request);
    const now = generation();
    if (typeof now === "string" && kept !== undefined && kept.generation === now) return answerKept(request, kept, instanceCache);
    return (async () => {
      const fresh = await keepAsync(kept, await now, build);
      save(fresh);
      return answerKept(request, fresh, instanceCache);
    })();
  };

  const v1 = ({ mode, rules, stats }: { mode: RegistrationsMode; rules: ReturnType<typeof serializeRule>[]; stats: InstanceStats }) => {
    return {
      uri: config.domain,
      title: config.instanceTitle,
      short_description: description,
      description,
      email: config.contactEmail,
      version: VERSION_STRING,
      urls: { streaming_api: streamingUrl },
      stats: { user_count: stats.userCount, status_count: stats.statusCount, domain_count: stats.domainCount },
      thumbnail,
      languages: ["en"],
      // Mastodon: sign-ups are possible unless closed; approval is said apart. invites_enabled
      // is whether the everyone role may invite (UserRole.everyone.can?(:invite_users)): every
      // member makes invite links at /settings/invites.
      registrations: mode !== "closed",
      approval_required: mode === "approval",
      invites_enabled: can("user", "invite_users"),
      configuration: { accounts: { max_featured_tags: LIMITS.maxFeaturedTags }, statuses, media_attachments: mediaAttachments(), polls },
      contact_account: null,
      rules,
    };
  };
  const v2 = ({ mode, rules, stats }: { mode: RegistrationsMode; rules: ReturnType<typeof serializeRule>[]; stats: InstanceStats }) => {
    return {
      domain: config.domain,
      title: config.instanceTitle,
      version: VERSION_STRING,
      source_url: config.publicUrl,
      description,
      usage: { users: { active_month: stats.userCount } },
      thumbnail: { url: thumbnail },
      icon: [],
      languages: ["en"],
      configuration: {
        urls: { streaming: streamingUrl, status: null },
        vapid: { public_key: ctx.keys.vapidPublicKey },
        accounts: { max_featured_tags: LIMITS.maxFeaturedTags, max_pinned_statuses: LIMITS.maxPinnedStatuses },
        statuses,
        media_attachments: { ...mediaAttachments(), description_limit: LIMITS.descriptionLimit },
        polls,
        translation: { enabled: false },
      },
      // No reason is required under approval (Mastodon's require_invite_text is off by default).
      registrations: { enabled: mode !== "closed", approval_required: mode === "approval", reason_required: false, message: null, url: null },
      // 2: grouped notifications (/api/v2/notifications); 7: quote posts (Mastodon 4.5's
      // quoted_status_id, quote_approval, /quotes): clients switch on it.
      api_versions: { mastodon: 7 },
      contact: { email: config.contactEmail, account: null },
      rules,
    };
  };

  return new Elysia()
    .get("/api/v1/instance", ({ request }) => answer(request, keptV1, async () => v1(await stored()), (k) => (keptV1 = k)))
    .get("/api/v2/instance", ({ request }) => answer(request, keptV2, async () => v2(await stored()), (k) => (keptV2 = k)))
    .get("/api/v1/instance/rules", async ({ request }) => {
      userInWhitelistMode(request);
      return rules();
    })
    // Api::V1::CustomEmojisController: public, the emojis shown in pickers.
    .get("/api/v1/custom_emojis", async ({ request }) => {
      userInWhitelistMode(request);
      return (await services.customEmojis.list()).filter((r) => r.visibleInPicker).map((r) => serializeCustomEmoji(services.customEmojis.entity(r), r.category));
    })
    .get("/api/v1/instance/peers", async ({ request }) => closedInWhitelistMode(request) ?? (await services.instanceInfo.peers()))
    .get("/api/v1/instance/activity", async ({ request }) => closedInWhitelistMode(request) ?? (await services.instanceInfo.activity()).map(serializeWeek))
    .get("/api/v1/instance/extended_description", async ({ request }) => {
      userInWhitelistMode(request);
      const { html, updatedAt } = await services.instanceInfo.extendedDescription();
      return { updated_at: updatedAt === null ? null : new Date(updatedAt).toISOString(), content: html };
    })
    .get("/api/v1/instance/translation_languages", ({ request }) => (userInWhitelistMode(request), {}))
    .get("/.well-known/nodeinfo", ({ set }) => {
      set.headers["cache-control"] = DISCOVERY_CACHE;
      return { links: [{ rel: "http://nodeinfo.diaspora.software/ns/schema/2.0", href: `${config.publicUrl}/nodeinfo/2.0` }] };
    })
    // Public under WHITELIST_MODE too, counts and all: Mastodon's NodeInfo does not look at
    // LIMITED_FEDERATION_MODE, and servers read it to know what software they talk to.
    .get("/nodeinfo/2.0", async ({ set }) => {
      const mode = await services.registrations.mode();
      const stats = await services.instanceInfo.stats();
      set.headers["cache-control"] = "max-age=1800, public";
      set.headers["content-type"] = 'application/json; profile="http://nodeinfo.diaspora.software/ns/schema/2.0#"';
      return {
        version: "2.0",
        software: { name: "rookery", version: ROOKERY_VERSION },
        protocols: ["activitypub"],
        services: { outbound: [], inbound: [] },
        usage: { users: { total: stats.userCount, activeMonth: stats.userCount, activeHalfyear: stats.userCount }, localPosts: stats.statusCount },
        openRegistrations: mode !== "closed",
        // megalodon's detector accepts an unknown software whose upstream is Mastodon.
        metadata: { nodeName: config.instanceTitle, nodeDescription: description, upstream: { name: "mastodon", version: "4.3.0" } },
      };
    })
    .get("/.well-known/host-meta", ({ request }) => {
      const template = `${config.publicUrl}/.well-known/webfinger?resource={uri}`;
      if ((request.headers.get("accept") ?? "").includes("application/json")) {
        return new Response(JSON.stringify({ links: [{ rel: "lrdd", template }] }), {
          headers: { "content-type": "application/json; charset=utf-8", "cache-control": DISCOVERY_CACHE },
        });
      }
      return new Response(
        `<?xml version="1.0" encoding="UTF-8"?>\n<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">\n  <Link rel="lrdd" template="${template}"/>\n</XRD>\n`,
        { headers: { "content-type": "application/xrd+xml; charset=utf-8", "cache-control": DISCOVERY_CACHE } },
      );
    })
    .get("/.well-known/webfinger", async (c) => {
      const resource = (str(input(c).resource, "resource") ?? "").trim();
      if (resource === "") return new Response(null, { status: 400 });
      let username: string | null = null;
      if (/^https?:\/\//i.test(resource)) {
        if (resource.startsWith(`${config.publicUrl}/`)) {
          username = /^\/(?:@|users\/)([A-Za-z0-9_]+)$/.exec(resource.slice(config.publicUrl.length))?.[1] ?? null;
        }
      } else {
        const acct = /^(?:acct:)?@?([^@\s]+)@([^@\s]+)$/i.exec(resource);
        if (acct && (acct[2] as string).toLowerCase() === config.domain.toLowerCase()) username = acct[1] as string;
      }
      const jrd = { "content-type": "application/jrd+json; charset=utf-8", "cache-control": DISCOVERY_CACHE };
      if (instanceActor !== null && (username === instanceActor || resource === `${config.publicUrl}/users/${instanceActor}`)) {
        return new Response(JSON.stringify(instanceWebfinger(instanceActor)), { headers: jrd });
      }
      const account = username ? await services.accounts.getLocal(username) : undefined;
      if (!account) return new Response(null, { status: 404 });
      // Deleted by staff: gone (Mastodon's WebfingerController for a permanently unavailable account).
      if (await services.federationActors.deletedLocally(account)) return new Response(null, { status: 410 });
      return new Response(JSON.stringify(webfinger(account.username)), {
        headers: { "content-type": "application/jrd+json; charset=utf-8", "cache-control": DISCOVERY_CACHE },
      });
    });
}
