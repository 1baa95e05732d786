import { describe, expect, test } from "bun:test";
import { ChannelError, resolveChannel, streamFromPath } from "../../src/streaming/channels.ts";
import type { Authentication } from "../../src/services/oauth/tokens.ts";

const user = (scopes: string[]): Authentication => ({ tokenId: 1, applicationId: 1, accountId: 7, scopes, createdAt: 0 });
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ChannelError) return { status: e.status, error: e.message };
  }
  return null;
};

describe("streamFromPath", () => {
  test("maps exactly Mastodon's paths; only_media picks the media variant of public streams", () => {
    expect(streamFromPath("/api/v1/streaming/user", null)).toBe("user");
    expect(streamFromPath("/api/v1/streaming/user/notification", null)).toBe("user:notification");
    expect(streamFromPath("/api/v1/streaming/public/local", "1")).toBe("public:local:media");
    expect(streamFromPath("/api/v1/streaming/public", "false")).toBe("public");
    expect(streamFromPath("/api/v1/streaming/public", "")).toBe("public");
    expect(streamFromPath("/api/v1/streaming/hashtag", "true")).toBe("hashtag");
    expect(streamFromPath("/api/v1/streaming/public/", null)).toBeNull();
    expect(streamFromPath("/api/v1/streaming", null)).toBeNull();
  });
});

describe("resolveChannel", () => {
  test("user streams: topics per scope", () => {
    expect(resolveChannel("user", {}, user(["read"])).topics).toEqual(["user:7", "notifications:7"]);
    expect(resolveChannel("user", {}, user(["read:statuses"])).topics).toEqual(["user:7"]);
    expect(resolveChannel("user:notification", {}, user(["read:notifications"])).topics).toEqual(["notifications:7"]);
    expect(refusal(() => resolveChannel("user:notification", {}, user(["read:statuses"])))).toEqual({ status: 401, error: "Access token does not have the required scopes" });
    expect(refusal(() => resolveChannel("direct", {}, null))).toEqual({ status: 401, error: "Missing access token" });
  });

  test("hashtags are normalised for the topic and echoed as sent", () => {
    const channel = resolveChannel("hashtag:local", { tag: "Café" }, null);
    expect(channel.topics).toEqual(["hashtag:cafe:local"]);
    expect(channel.stream).toEqual(["hashtag:local", "Café"]);
    expect(refusal(() => resolveChannel("hashtag", {}, null))).toEqual({ status: 404, error: "Not found" });
  });

  test("lists: the id named for the owner's check (the streaming side reads it), echoed with the type it was sent as; no id is refused", () => {
    expect(resolveChannel("list", { list: 42 }, user(["read"]))).toEqual({ key: "list:42", topics: ["list:42"], stream: ["list", 42], listId: 42 });
    expect(resolveChannel("list", { list: "43" }, user(["read"])).listId).toBe(43);
    expect(refusal(() => resolveChannel("list", { list: "not an id" }, user(["read"])))).toEqual({ status: 404, error: "Not found" });
  });

  test("public streams need nothing; unknown names are refused", () => {
    expect(resolveChannel("public:remote:media", {}, null).topics).toEqual(["public:remote:media"]);
    expect(refusal(() => resolveChannel("firehose", {}, null))).toEqual({ status: 400, error: "Unknown channel requested" });
    expect(refusal(() => resolveChannel(undefined, {}, null))).toEqual({ status: 400, error: "Unknown channel requested" });
  });
});
