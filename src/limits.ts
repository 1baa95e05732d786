/** Limits Mastodon 4.3 publishes and enforces; the instance endpoints advertise these same values. */
export const LIMITS = {
  statusCharacters: 500,
  charactersReservedPerUrl: 23,
  mediaAttachments: 4,
  pollOptions: 4,
  pollOptionCharacters: 50,
  pollMinExpiration: 300,
  pollMaxExpiration: 2_629_746,
  imageSizeLimit: 16 * 1024 * 1024,
  imageMatrixLimit: 33_177_600,
  descriptionLimit: 1500,
  maxPinnedStatuses: 5,
  maxFeaturedTags: 10,
} as const;

/**
 * Image types the bundled sharp decodes. HEIC/HEIF is left out: this libvips decodes AV1
 * (AVIF) but not HEVC, so iPhone photos must arrive converted (which clients do when the type
 * is not listed).
 */
export const SUPPORTED_MIME_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp", "image/avif"];

/** Video and audio, Mastodon's list, in its order: accepted where ffmpeg is (src/media-files/ffmpeg.ts). */
export const AV_MIME_TYPES = [
  "video/webm",
  "video/mp4",
  "video/quicktime",
  "video/ogg",
  "audio/wave",
  "audio/wav",
  "audio/x-wav",
  "audio/x-pn-wave",
  "audio/vnd.wave",
  "audio/ogg",
  "audio/vorbis",
  "audio/mpeg",
  "audio/mp3",
  "audio/webm",
  "audio/flac",
  "audio/aac",
  "audio/m4a",
  "audio/x-m4a",
  "audio/mp4",
  "audio/3gpp",
  "video/x-ms-asf",
];
