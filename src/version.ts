import pkg from "../package.json" with { type: "json" };

export const ROOKERY_VERSION: string = pkg.version;
/** The Mastodon API level Rookery answers as. */
export const MASTODON_COMPAT_VERSION = "4.3.0";
/** What /api/v1/instance and /api/v2/instance report: clients read the leading Mastodon version. */
export const VERSION_STRING = `${MASTODON_COMPAT_VERSION} (compatible; Rookery ${ROOKERY_VERSION})`;
