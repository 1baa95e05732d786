import { eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { ApplicationRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { digest, randomSecret, safeEqual } from "../../auth/secrets.ts";
import { DEFAULT_SCOPES, parseScopes, unknownScopes } from "../../auth/scopes.ts";
import { validationFailed } from "../../errors.ts";

export const OOB_REDIRECT_URI = "urn:ietf:wg:oauth:2.0:oob";

export interface NewApplication {
  name?: string;
  /** One string (URIs separated by white space) or a list. */
  redirectUris?: string | string[];
  scopes?: string;
  website?: string;
}

export interface RegisteredApplication {
  app: ApplicationRow;
  clientSecret: string;
}

/**
 * Control characters (Unicode Cc) and the invisible bidirectional controls (marks, embeddings,
 * overrides, isolates): in an app's name they could make "Authorize X" read as something else.
 */
const CONTROL_CHARACTERS = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/**
 * What a redirect URI may contain: printable ASCII, as Ruby's URI parser (Doorkeeper's) demands.
 * Control characters would be dropped by URL parsing when matching but not by a Location header.
 */
export function isPrintableAscii(value: string): boolean {
  return /^[\x21-\x7E]*$/.test(value);
}

/**
 * Doorkeeper's RedirectUriValidator with Mastodon's settings: custom schemes are fine
 * (mobile apps), http is allowed, fragments and script schemes are not.
 */
function redirectUriErrors(value: string): string[] {
  const errors: string[] = [];
  for (const uri of value.split(/\s+/).filter(Boolean)) {
    if (uri === OOB_REDIRECT_URI || uri === `${OOB_REDIRECT_URI}:auto`) continue;
    if (!isPrintableAscii(uri)) {
      errors.push("Redirect URI must be a valid URI.");
      continue;
    }
    let parsed: URL;
    try {
      parsed = new URL(uri);
    } catch {
      errors.push(/^[a-z][a-z0-9+.-]*:/i.test(uri) && !/\s/.test(uri) ? "Redirect URI must be a valid URI." : "Redirect URI must be an absolute URI.");
      if (/\s/.test(uri)) break;
      continue;
    }
    const scheme = parsed.protocol.slice(0, -1).toLowerCase();
    if (["data", "vbscript", "javascript"].includes(scheme)) errors.push("Redirect URI is forbidden by the server.");
    if (uri.includes("#")) errors.push("Redirect URI cannot contain a fragment.");
    if (scheme === "localhost") errors.push("Redirect URI must specify a scheme.");
    if ((scheme === "http" || scheme === "https") && parsed.hostname === "") errors.push("Redirect URI must be a valid URI.");
  }
  return errors;
}

export class ApplicationService {
  // Built once: drizzle spends more building a query than SQLite running it (src/db/port.ts).
  private q;

  constructor(
    db: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
  ) {
    const { applications } = db.tables;
    this.q = {
      insert: db.orm.insert(applications).values({
        id: sql.placeholder("id"),
        name: sql.placeholder("name"),
        website: sql.placeholder("website"),
        redirectUris: sql.placeholder("redirectUris"),
        scopes: sql.placeholder("scopes"),
        clientId: sql.placeholder("clientId"),
        clientSecretHash: sql.placeholder("clientSecretHash"),
        createdAt: sql.placeholder("createdAt"),
      }).prepare(),
      byId: db.orm.select().from(applications).where(eq(applications.id, sql.placeholder("id"))).prepare(),
      byClientId: db.orm.select().from(applications).where(eq(applications.clientId, sql.placeholder("clientId"))).prepare(),
    };
  }

  async register(input: NewApplication): Promise<RegisteredApplication> {
    const name = (input.name ?? "").trim();
    const redirect = Array.isArray(input.redirectUris) ? input.redirectUris.join("\n") : (input.redirectUris ?? "");
    const redirectUris = redirect.trim();
    const scopesRaw = input.scopes ?? DEFAULT_SCOPES;
    const scopes = parseScopes(scopesRaw);
    const website = input.website?.trim() || null;

    const errors: string[] = [];
    if (name === "") errors.push("Application name can't be blank");
    if (redirectUris === "") errors.push("Redirect URI can't be blank");
    else errors.push(...redirectUriErrors(redirectUris));
    if (/[\n\r\t]/.test(scopesRaw) || unknownScopes(scopes).length > 0) errors.push("Scopes doesn't match configured on the server.");
    if (CONTROL_CHARACTERS.test(name)) errors.push("Application name is invalid");
    if (name.length > 60) errors.push("Application name is too long (maximum is 60 characters)");
    if (redirectUris.length > 2000) errors.push("Redirect URI is too long (maximum is 2000 characters)");
    if (website !== null) {
      if (!isHttpUrl(website) || CONTROL_CHARACTERS.test(website)) errors.push("Application website is not a valid URL");
      if (website.length > 2000) errors.push("Application website is too long (maximum is 2000 characters)");
    }
    if (errors.length > 0) throw validationFailed(...errors);

    const clientSecret = randomSecret();
    const row: ApplicationRow = {
      id: this.ids.next(),
      name,
      website,
      redirectUris: redirectUris.split(/\s+/).join("\n"),
      scopes: scopes.join(" "),
      clientId: randomSecret(),
      clientSecretHash: digest(clientSecret),
      createdAt: this.clock.now(),
    };
    await this.q.insert.execute(row);
    return { app: row, clientSecret };
  }

  async findById(id: number): Promise<ApplicationRow | undefined> {
    return ((await this.q.byId.execute({ id })) as ApplicationRow[])[0];
  }

  async findByClientId(clientId: string): Promise<ApplicationRow | undefined> {
    if (clientId.length === 0 || clientId.length > 256) return undefined;
    return ((await this.q.byClientId.execute({ clientId })) as ApplicationRow[])[0];
  }

  /** The app whose id and secret both match, else undefined. */
  async authenticateClient(clientId: string | undefined, clientSecret: string | undefined): Promise<ApplicationRow | undefined> {
    if (!clientId || !clientSecret) return undefined;
    const app = await this.findByClientId(clientId);
    if (!app) return undefined;
    return safeEqual(digest(clientSecret), app.clientSecretHash) ? app : undefined;
  }
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/**
 * Where to send the browser for a requested redirect URI: the registered URI it matches, as
 * stored (never the requested spelling), or undefined when none matches. Doorkeeper's
 * URIChecker: exact match, except that a loopback redirect may use any port (RFC 8252
 * section 7.3, and then the requested port is used) and a registered query may come in any order.
 */
export function redirectTarget(requested: string, registered: string[]): string | undefined {
  const match = registered.find((r) => {
    if (r === requested) return true;
    let a: URL, b: URL;
    try {
      a = new URL(requested);
      b = new URL(r);
    } catch {
      return false;
    }
    if (a.protocol !== b.protocol || a.pathname !== b.pathname || a.hash || b.hash) return false;
    const loopback = (h: string) => h === "127.0.0.1" || h === "[::1]";
    const hostOk = a.hostname === b.hostname && (a.port === b.port || (loopback(a.hostname) && loopback(b.hostname)));
    if (!hostOk) return false;
    const qa = [...a.searchParams].map((p) => p.join("=")).sort().join("&");
    const qb = [...b.searchParams].map((p) => p.join("=")).sort().join("&");
    return qa === qb;
  });
  if (match === undefined || match === requested) return match;
  const asked = new URL(requested);
  const stored = new URL(match);
  if (asked.port === stored.port) return match;
  stored.port = asked.port;
  return stored.href;
}
