import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";

describe("configuration", () => {
  test("defaults", () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.host).toBe("127.0.0.1");
    expect(c.dataDir.endsWith("/data")).toBe(true);
    expect(c.publicUrl).toBe("http://localhost:3000");
    expect(c.domain).toBe("localhost:3000");
    expect(c.registrations).toBe("closed");
    expect(c.whitelistMode).toBe(false);
    expect(c.rateLimits).toBe(true);
    expect(c.trustedProxies).toEqual([]);
    expect(c.remoteMediaCache).toEqual({ maxTotalBytes: 1024 * 1024 * 1024 });
    expect(c.outgoing).toEqual({ firstByteMs: 10_000, totalMs: 10_000, maxPerHost: 8, maxTotal: 64 });
    expect(c.inboxRateLimit).toEqual({ limit: 2000, periodMs: 5 * 60 * 1000 });
    expect(c.authorizedFetch).toBe(false);
  });

  test("MEDIA_STORAGE: files by default; s3 with the bucket's settings (Mastodon's names), the endpoint AWS's for the region unless given, S3_ALIAS_HOST a host served over https or a URL", () => {
    expect(loadConfig({}).mediaStorage).toEqual({ kind: "files" });
    const bucket = { MEDIA_STORAGE: "s3", S3_BUCKET: "media", AWS_ACCESS_KEY_ID: "id", AWS_SECRET_ACCESS_KEY: "secret" };
    expect(loadConfig({ ...bucket, S3_REGION: "eu-central-1" }).mediaStorage).toEqual({
      kind: "s3",
      endpoint: "https://s3.eu-central-1.amazonaws.com",
      bucket: "media",
      region: "eu-central-1",
      accessKeyId: "id",
      secretAccessKey: "secret",
      aliasUrl: null,
    });
    const r2 = loadConfig({ ...bucket, S3_ENDPOINT: "https://acct.r2.cloudflarestorage.com/", S3_REGION: "auto", S3_ALIAS_HOST: "files.example.com" }).mediaStorage;
    expect(r2).toMatchObject({ endpoint: "https://acct.r2.cloudflarestorage.com", region: "auto", aliasUrl: "https://files.example.com" });
    expect(loadConfig({ ...bucket, S3_ALIAS_HOST: "http://127.0.0.1:9000/media/" }).mediaStorage).toMatchObject({ aliasUrl: "http://127.0.0.1:9000/media" });
  });

  test.each([
    ["MEDIA_STORAGE", { MEDIA_STORAGE: "nfs" }],
    ["S3_BUCKET", { MEDIA_STORAGE: "s3", AWS_ACCESS_KEY_ID: "id", AWS_SECRET_ACCESS_KEY: "secret" }],
    ["AWS_ACCESS_KEY_ID", { MEDIA_STORAGE: "s3", S3_BUCKET: "media", AWS_SECRET_ACCESS_KEY: "secret" }],
    ["AWS_SECRET_ACCESS_KEY", { MEDIA_STORAGE: "s3", S3_BUCKET: "media", AWS_ACCESS_KEY_ID: "id" }],
    ["S3_ENDPOINT", { MEDIA_STORAGE: "s3", S3_BUCKET: "media", AWS_ACCESS_KEY_ID: "id", AWS_SECRET_ACCESS_KEY: "secret", S3_ENDPOINT: "ftp://s3.example" }],
    ["S3_ALIAS_HOST", { MEDIA_STORAGE: "s3", S3_BUCKET: "media", AWS_ACCESS_KEY_ID: "id", AWS_SECRET_ACCESS_KEY: "secret", S3_ALIAS_HOST: "https://cdn.example/?x=1" }],
  ] as const)("a bad or missing %s names the variable", (name, env) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });

  test("INBOX_RATE_LIMIT is <requests>/<seconds>, or off", () => {
    expect(loadConfig({ INBOX_RATE_LIMIT: "500/60" }).inboxRateLimit).toEqual({ limit: 500, periodMs: 60_000 });
    expect(loadConfig({ INBOX_RATE_LIMIT: " OFF " }).inboxRateLimit).toBeNull();
  });

  test.each(["0", "lots", "1.5"])("a bad REMOTE_MEDIA_CACHE_MB (%s) names the variable", (value) => {
    expect(() => loadConfig({ CACHE_REMOTE_MEDIA: "true", REMOTE_MEDIA_CACHE_MB: value })).toThrow("REMOTE_MEDIA_CACHE_MB");
  });

  test("CACHE_REMOTE_MEDIA on by default with its bound, 1 GB unless REMOTE_MEDIA_CACHE_MB says; off when asked", () => {
    expect(loadConfig({}).remoteMediaCache).toEqual({ maxTotalBytes: 1024 * 1024 * 1024 });
    expect(loadConfig({ CACHE_REMOTE_MEDIA: "false" }).remoteMediaCache).toBeNull();
    expect(loadConfig({ CACHE_REMOTE_MEDIA: "true" }).remoteMediaCache).toEqual({ maxTotalBytes: 1024 * 1024 * 1024 });
    expect(loadConfig({ CACHE_REMOTE_MEDIA: "true", REMOTE_MEDIA_CACHE_MB: "50" }).remoteMediaCache).toEqual({ maxTotalBytes: 50 * 1024 * 1024 });
  });

  test("PUBLIC_URL follows PORT unless given", () => {
    expect(loadConfig({ PORT: "8080" }).publicUrl).toBe("http://localhost:8080");
    const c = loadConfig({ PUBLIC_URL: "https://social.example/" });
    expect(c.publicUrl).toBe("https://social.example");
    expect(c.domain).toBe("social.example");
  });

  test.each([
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["PUBLIC_URL", "not a url"],
    ["PUBLIC_URL", "ftp://x.example"],
    ["PUBLIC_URL", "https://x.example/sub"],
    ["REGISTRATIONS", "maybe"],
    ["WHITELIST_MODE", "perhaps"],
    ["RATE_LIMITS", "sometimes"],
    ["TRUSTED_PROXIES", "10.0.0.0/40"],
    ["MEDIA_WORKERS", "0"],
    ["MEDIA_WORKERS", "lots"],
    ["CACHE_REMOTE_MEDIA", "maybe"],
    ["INBOX_RATE_LIMIT", "2000"],
    ["INBOX_RATE_LIMIT", "0/300"],
    ["INBOX_RATE_LIMIT", "2000/0"],
    ["INBOX_RATE_LIMIT", "lots/5m"],
    ["AUTHORIZED_FETCH", "maybe"],
  ])("a bad %s names the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
