/**
 * Every environment variable Rookery reads, declared once: its name, its default (the text
 * read when the variable is unset or empty, parsed like any value; `shown` instead where the
 * default is worked out, such as PUBLIC_URL's from PORT), and one line of help. `rookery --help` renders this table and every read goes
 * through `setting()`, typed by it, so a setting cannot be read without being listed (and
 * test/unit/settings.test.ts checks that nothing in src/ reads the environment another way).
 * The parsing and validation of each value is in config.ts.
 */
export const SETTINGS = [
  { name: "PORT", default: "3000", help: "Port to listen on (0: any free port)" },
  { name: "HOST", default: "127.0.0.1", help: "Address to listen on (0.0.0.0 or :: for all; a reverse proxy on this host is better)" },
  { name: "DATA_DIR", default: "./data", help: "The database (rookery.sqlite3), the key files and the media; give an absolute path" },
  { name: "DATABASE_URL", default: "", shown: "none: SQLite in DATA_DIR", help: "A PostgreSQL database to serve from instead, postgres://user:password@host:5432/database (docs/scaling.md). Not finished: the server refuses it for now" },
  { name: "PUBLIC_URL", shown: "http://localhost:$PORT", help: "The origin people and servers reach this one at; its host (with any port) is the handles' domain" },
  { name: "REGISTRATIONS", default: "closed", help: "open: anyone may sign up through the API; approval: so may anyone, and staff approve each account; closed: accounts are made with the CLI or invite links. A mode an admin saves at /admin/settings wins over it" },
  { name: "WHITELIST_MODE", default: "false", help: "true: public reads need a signed-in user, and only allowed domains federate" },
  { name: "AUTHORIZED_FETCH", default: "false", help: "true: Mastodon's secure mode (statuses and collections only to signed requests)" },
  { name: "RATE_LIMITS", default: "on", help: "off: no request limits, sign-in throttling included (tests, private set-ups)" },
  { name: "INBOX_RATE_LIMIT", default: "2000/300", help: "Inbox POSTs one address may make, <requests>/<seconds>, or off" },
  { name: "TRUSTED_PROXIES", default: "", shown: "none", help: "Comma-separated addresses or CIDR ranges whose X-Forwarded-For is believed" },
  { name: "INSTANCE_TITLE", default: "Rookery", help: "The server's name in the instance endpoints" },
  { name: "CONTACT_EMAIL", default: "", shown: "none", help: "The contact address in the instance endpoints" },
  { name: "LOG_REQUESTS", default: "true", help: "One log line per request (false: start-up, warnings and errors only)" },
  { name: "WEB_THREADS", default: "1", help: "Threads serving requests: the main one (writes, queues, federation) and WEB_THREADS - 1 more answering reads, each from its own database connection. On PostgreSQL one thread: run more processes instead" },
  { name: "ID_WORKER", default: "0/1", help: "This process's number among the processes making ids on one database, <number>/<how many> (up to 256; several only on PostgreSQL): each keeps its own low bits of every id. Unset on PostgreSQL: leased from the database, one of 16" },
  { name: "MEDIA_WORKERS", shown: "cores - 1; ffmpeg: 1", help: "Uploads processed at a time in the background (and ffmpeg transcodes, when set)" },
  { name: "FEDERATION", default: "on", help: "off: no ActivityPub at all (an island server)" },
  { name: "ALLOW_PRIVATE_ADDRESSES", default: "false", help: "true: outgoing requests may reach loopback and private addresses (tests only: SSRF)" },
  { name: "CACHE_REMOTE_MEDIA", default: "true", help: "Copy remote statuses' images here, so readers' apps never ask other servers" },
  { name: "REMOTE_MEDIA_CACHE_MB", default: "1024", help: "The bound of those copies together, in MB; past it the oldest go" },
  { name: "MEDIA_STORAGE", default: "files", help: "files: media under DATA_DIR/media, served by Rookery; s3: in an S3-compatible bucket (the S3_ settings; see docs/scaling.md)" },
  { name: "S3_ENDPOINT", shown: "AWS's for S3_REGION", help: "The bucket's S3 endpoint, such as https://s3.eu-central-1.amazonaws.com or https://<account>.r2.cloudflarestorage.com" },
  { name: "S3_BUCKET", default: "", shown: "none", help: "The bucket's name (MEDIA_STORAGE=s3)" },
  { name: "S3_REGION", default: "us-east-1", help: "The bucket's region (auto for R2)" },
  { name: "AWS_ACCESS_KEY_ID", default: "", shown: "none", help: "The key id Rookery signs its S3 requests with (Mastodon's name; any S3 provider's key)" },
  { name: "AWS_SECRET_ACCESS_KEY", default: "", shown: "none", help: "Its secret" },
  { name: "S3_ALIAS_HOST", default: "", shown: "none", help: "Where clients fetch the bucket's files: a CDN host (https) or URL; unset: through PUBLIC_URL/system/, redirected to presigned URLs" },
  { name: "FETCH_TIMEOUT_SECONDS", default: "10", help: "How long a request to another server may take" },
  { name: "FETCH_MAX_PER_HOST", default: "8", help: "Requests open at once to one other server" },
  { name: "FETCH_MAX_CONCURRENT", default: "64", help: "Requests open at once to other servers in all" },
  { name: "IMPORT_RATE_PER_HOST", default: "60/60", help: "Imported list entries worked off per server, <entries>/<seconds>, or off" },
  { name: "IMPORT_RATE", default: "300/60", help: "Imported list entries worked off in all, <entries>/<seconds>, or off" },
  { name: "TMPDIR", shown: "/tmp", help: "Where the executable writes the libvips copy it loads: must allow executables" },
  { name: "FFMPEG_PATH", shown: "built in", help: "Another ffmpeg for video and audio (with FFPROBE_PATH: both or neither)" },
  { name: "FFPROBE_PATH", shown: "built in", help: "Another ffprobe (with FFMPEG_PATH)" },
  { name: "PATH", shown: "the system's", help: "Searched for ffmpeg and ffprobe when run from source without them built in" },
] as const satisfies readonly Setting[];

interface Setting {
  name: string;
  default?: string;
  shown?: string;
  help: string;
}

export type SettingName = (typeof SETTINGS)[number]["name"];

export type Env = Record<string, string | undefined>;

const BY_NAME = new Map<string, Setting>(SETTINGS.map((s) => [s.name, s]));

/** The value of one declared setting: the environment's, else its default (undefined when it has none). */
export function setting(name: SettingName, env: Env = process.env): string | undefined {
  const value = env[name];
  return value !== undefined && value.trim() !== "" ? value : BY_NAME.get(name)?.default;
}

/** Whether the operator gave the setting (a default is not). */
export function settingGiven(name: SettingName, env: Env = process.env): boolean {
  const value = env[name];
  return value !== undefined && value.trim() !== "";
}

/** The settings as `--help` lists them: the name, then its help and default, wrapped to the terminal's width. */
export function settingsHelp(width = 100): string {
  const column = Math.max(...SETTINGS.map((s) => s.name.length)) + 4;
  const lines: string[] = [];
  for (const s of SETTINGS) {
    const setting: Setting = s;
    // The default stays on one line, however the help wraps.
    const words = [...s.help.split(" "), `(default: ${setting.shown ?? setting.default})`];
    let line = `  ${s.name.padEnd(column - 2)}`;
    for (const word of words) {
      if (line.length + word.length + 1 > width && line.trim() !== s.name) {
        lines.push(line.trimEnd());
        line = " ".repeat(column);
      }
      line += `${word} `;
    }
    lines.push(line.trimEnd());
  }
  return `${lines.join("\n")}\n`;
}
