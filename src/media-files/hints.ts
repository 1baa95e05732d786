/**
 * What other servers say of an attachment besides its file: its BlurHash and its focal point.
 * Both are display hints from a stranger, checked before anyone shows them.
 */

/** BlurHash's base-83 alphabet (Mastodon's MediaAttachmentParser checks the same characters). */
const BASE83 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";
const ALPHABET = /^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]+$/;

/**
 * A remote BlurHash as Mastodon keeps one (`supported_blurhash?`): base-83 characters, at most
 * 5x5 components (its first character says how many), and exactly as long as those components
 * need (4 + 2 per component; the blurhash gem's `components` gives none otherwise). Anything
 * else is null, and the hash is then computed here when the media is copied.
 */
export function remoteBlurhash(value: unknown): string | null {
  if (typeof value !== "string" || value.length > 4 + 2 * 5 * 5 || !ALPHABET.test(value)) return null;
  const sizeFlag = BASE83.indexOf(value[0]!);
  const x = (sizeFlag % 9) + 1;
  const y = Math.floor(sizeFlag / 9) + 1;
  return x <= 5 && y <= 5 && value.length === 4 + 2 * x * y ? value : null;
}

/**
 * A remote focal point (`focalPoint: [x, y]`): two finite numbers, each brought within -1..1.
 * Mastodon stores any pair of floats it is given; a point past an edge means that edge, and
 * clients only draw points within the image, so it is clamped rather than dropped.
 */
export function remoteFocus(value: unknown): { x: number; y: number } | null {
  if (!Array.isArray(value) || value.length !== 2 || !value.every((v) => typeof v === "number" && Number.isFinite(v))) return null;
  const clamp = (v: number) => Math.min(1, Math.max(-1, v)) + 0; // + 0 makes -0 plain 0
  return { x: clamp(value[0] as number), y: clamp(value[1] as number) };
}
