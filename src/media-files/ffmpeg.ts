import { accessSync, chmodSync, constants, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { setPriority } from "node:os";
import { join } from "node:path";
import { log } from "../log.ts";
import { setting } from "../settings.ts";

/**
 * ffmpeg and ffprobe: where they come from, and how they run.
 *
 * Where from, in this order: FFMPEG_PATH / FFPROBE_PATH; the copies built into the
 * executable (scripts/build.ts embeds the two npm packages' static binaries, compressed, and they
 * are unpacked once under DATA_DIR/tools); the same packages in node_modules (`bun run`); the
 * system's, on PATH. The packages (@ffmpeg-installer/linux-x64, @ffprobe-installer/linux-x64)
 * carry the binaries inside their tarballs: nothing is downloaded at install or run time.
 *
 * How they run: as a separate process, never in ours, with an empty environment, at a lower
 * priority than the server, under ulimit bounds on CPU seconds, address space and written file
 * size, and killed after a wall-clock deadline. Inputs are limited to local files and to the
 * demuxers we accept, so a crafted file (an HLS playlist posing as a video, say) cannot make
 * it read other files or reach the network.
 */

export interface MediaTools {
  ffmpeg: string;
  ffprobe: string;
  /** Where they were found, said in the log when they are first made ready. */
  source: "settings" | "embedded" | "package" | "system";
}

export interface RunLimits {
  /** Wall-clock deadline, ms. */
  timeoutMs: number;
  /** CPU seconds (ulimit -t). */
  cpuSeconds: number;
  /** Address space, MiB (ulimit -v). */
  memoryMb: number;
  /** Largest file the process may write, MiB (ulimit -f). */
  fileMb: number;
}

export const DEFAULT_LIMITS: RunLimits = { timeoutMs: 10 * 60_000, cpuSeconds: 15 * 60, memoryMb: 3072, fileMb: 512 };
const PROBE_LIMITS: RunLimits = { timeoutMs: 30_000, cpuSeconds: 30, memoryMb: 1024, fileMb: 1 };
/** One frame, for a preview: seconds at most, whatever the file. */
export const FRAME_LIMITS: RunLimits = { timeoutMs: 60_000, cpuSeconds: 60, memoryMb: 2048, fileMb: 32 };

/**
 * Decoders an upload may reach: the codecs Mastodon's formats carry, and nothing of the
 * hundreds of others ffmpeg has (an old, rarely used decoder is where a crafted file would aim).
 */
export const INPUT_CODECS = [
  "h264",
  "hevc",
  "vp8",
  "vp9",
  "libvpx",
  "libvpx-vp9",
  "av1",
  "libdav1d",
  "libaom-av1",
  "mpeg4",
  "theora",
  "aac",
  "aac_fixed",
  "mp3",
  "mp3float",
  "opus",
  "libopus",
  "vorbis",
  "libvorbis",
  "flac",
  "alac",
  "wmav1",
  "wmav2",
  "wmapro",
  "pcm_s16le",
  "pcm_s16be",
  "pcm_s24le",
  "pcm_s24be",
  "pcm_s32le",
  "pcm_f32le",
  "pcm_f64le",
  "pcm_u8",
  "pcm_alaw",
  "pcm_mulaw",
  "gif",
  "apng",
  "png",
  "mjpeg",
].join(",");

/** Demuxers an upload may be read with; everything else (hls, concat, image2...) is refused. */
export const INPUT_FORMATS = "mov,matroska,webm,gif,apng,mp3,ogg,flac,wav,aac,asf";

/** The embedded compressed binary (inside a compiled executable) named `name-<hash>.zst`. */
function embedded(name: string): Blob | undefined {
  const files = (Bun as unknown as { embeddedFiles?: Blob[] }).embeddedFiles ?? [];
  return files.find((f) => new RegExp(`^${name}-[a-z0-9]+\\.zst$`).test((f as Blob & { name?: string }).name ?? ""));
}

function executable(path: string | undefined): path is string {
  if (!path) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (setting("PATH") ?? "").split(":")) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * Unpacks an embedded binary under `dir/<blob name without .zst>/` once (the name carries its
 * content hash, so an upgrade unpacks the new one and removes the old); written under a
 * temporary name and renamed, so a crash never leaves a half-written tool behind.
 */
async function unpack(blob: Blob, name: string, dir: string): Promise<string> {
  const blobName = (blob as Blob & { name: string }).name;
  const folder = join(dir, blobName.replace(/\.zst$/, ""));
  const path = join(folder, name);
  if (executable(path)) return path;
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  // Earlier versions go, and what an interrupted unpack left.
  for (const old of readdirSync(dir)) {
    if (old.startsWith(`${name}-`) && join(dir, old) !== folder) rmSync(join(dir, old), { recursive: true, force: true });
  }
  for (const partial of readdirSync(folder)) if (partial.includes(".partial-")) rmSync(join(folder, partial), { force: true });
  const partial = `${path}.partial-${process.pid}`;
  const writer = Bun.file(partial).writer();
  const reader = blob.stream().pipeThrough(new DecompressionStream("zstd" as CompressionFormat)).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // Awaited: the sink answers a promise when its buffer is full (backpressure).
    await writer.write(value);
  }
  await writer.end();
  chmodSync(partial, 0o500);
  renameSync(partial, path);
  return path;
}

/** Where the tools are, before anything is unpacked: cheap enough to ask at start-up. */
type Found = { kind: "ready"; tools: MediaTools } | { kind: "embedded"; ffmpeg: Blob; ffprobe: Blob };

export function findTools(): Found | null {
  const env = { ffmpeg: setting("FFMPEG_PATH"), ffprobe: setting("FFPROBE_PATH") };
  if (env.ffmpeg || env.ffprobe) {
    if (!executable(env.ffmpeg) || !executable(env.ffprobe)) {
      log("warn", "FFMPEG_PATH and FFPROBE_PATH must both name executables: video and audio uploads are refused");
      return null;
    }
    return { kind: "ready", tools: { ffmpeg: env.ffmpeg, ffprobe: env.ffprobe, source: "settings" } };
  }
  const packed = { ffmpeg: embedded("ffmpeg"), ffprobe: embedded("ffprobe") };
  if (packed.ffmpeg && packed.ffprobe) return { kind: "embedded", ffmpeg: packed.ffmpeg, ffprobe: packed.ffprobe };
  const modules = join(import.meta.dir, "..", "..", "node_modules");
  const pkg = { ffmpeg: join(modules, "@ffmpeg-installer/linux-x64/ffmpeg"), ffprobe: join(modules, "@ffprobe-installer/linux-x64/ffprobe") };
  if (existsSync(pkg.ffmpeg) && existsSync(pkg.ffprobe)) {
    // npm runs the packages' `chmod u+x` only where install scripts are allowed.
    for (const path of [pkg.ffmpeg, pkg.ffprobe]) if (!executable(path)) chmodSync(path, 0o755);
    return { kind: "ready", tools: { ...pkg, source: "package" } };
  }
  const system = { ffmpeg: onPath("ffmpeg"), ffprobe: onPath("ffprobe") };
  if (system.ffmpeg && system.ffprobe) return { kind: "ready", tools: { ffmpeg: system.ffmpeg, ffprobe: system.ffprobe, source: "system" } };
  return null;
}

let prepared: Promise<MediaTools | null> | null = null;

/**
 * The tools, ready to run; null when there are none. The embedded ones are unpacked at the
 * first video or audio upload, not at start-up: a server that never sees one never pays.
 */
export function mediaTools(dataDir: string): Promise<MediaTools | null> {
  prepared ??= prepare(dataDir).catch((e) => {
    log("warn", "ffmpeg could not be prepared: video and audio uploads are refused", { error: String(e).split("\n")[0] });
    // Tried again at the next upload (a disk that was full may not be any more).
    prepared = null;
    return null;
  });
  return prepared;
}

async function prepare(dataDir: string): Promise<MediaTools | null> {
  const found = findTools();
  if (!found) return null;
  const dir = join(dataDir, "tools");
  const tools = found.kind === "ready" ? found.tools : { ffmpeg: await unpack(found.ffmpeg, "ffmpeg", dir), ffprobe: await unpack(found.ffprobe, "ffprobe", dir), source: "embedded" as const };
  log("info", "ffmpeg ready for video and audio", { source: tools.source, ffmpeg: tools.ffmpeg });
  return tools;
}

export class ToolFailed extends Error {
  constructor(
    message: string,
    readonly reason: "exit" | "timeout" | "limit",
  ) {
    super(message);
  }
}

export interface RunResult {
  stdout: Uint8Array;
  stderr: string;
}

/**
 * Runs one of the tools under the limits. Resolves with its output when it exits with 0;
 * rejects with ToolFailed otherwise (the last lines of its stderr in the message).
 */
export async function runTool(binary: string, args: string[], options: { limits?: RunLimits; stdin?: ReadableStream<Uint8Array> | Blob; cwd?: string } = {}): Promise<RunResult> {
  const limits = options.limits ?? DEFAULT_LIMITS;
  // The shell sets the bounds and then becomes the tool (exec), so the pid is the tool's. A
  // watchdog beside it kills the tool if the server dies (kill -9 included): the tool would
  // otherwise run on, orphaned, since it inherits our ignored SIGPIPE and never notices.
  // The tool is known by its pid and start time, so a pid reused after it ended is never hit.
  const alive = `[ "$(cut -d' ' -f22 /proc/$me/stat 2>/dev/null)" = "$born" ]`;
  const watchdog = `(while kill -0 "$parent" 2>/dev/null && ${alive}; do sleep 1; done; kill -0 "$parent" 2>/dev/null || ! ${alive} || kill -9 "$me" 2>/dev/null) </dev/null >/dev/null 2>&1 &`;
  // Each bound is lowered to the hard limit where that is lower: raising it would fail.
  const cap = `cap() { h=$(ulimit -H "$1"); if [ "$h" != unlimited ] && [ "$h" -lt "$2" ]; then echo "$h"; else echo "$2"; fi; }`;
  const bounds = `ulimit -t "$(cap -t ${limits.cpuSeconds})" && ulimit -v "$(cap -v ${limits.memoryMb * 1024})" && ulimit -f "$(cap -f ${limits.fileMb * 2048})" || exit 126`;
  const bounded = `parent=$PPID; me=$$; born=$(cut -d' ' -f22 /proc/$$/stat); ${cap}; ${bounds}; ${watchdog} exec "$0" "$@"`;
  const proc = Bun.spawn(["/bin/sh", "-c", bounded, binary, ...args], {
    env: {},
    cwd: options.cwd,
    stdin: options.stdin ?? "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    setPriority(proc.pid, 10);
  } catch {
    // Gone already, or not permitted: it runs at our priority.
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, limits.timeoutMs);
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).bytes(), new Response(proc.stderr).text(), proc.exited]);
    // ffmpeg ends "successfully" with what it had when an allocation is refused: not a result.
    const starved = /Cannot allocate memory|out of memory|failed to map segment/i.test(stderr);
    if (code === 0 && !timedOut && !starved) return { stdout, stderr };
    const tail = stderr.trim().split("\n").slice(-3).join(" / ").slice(0, 500);
    if (timedOut) throw new ToolFailed(`timed out after ${limits.timeoutMs} ms`, "timeout");
    // SIGXCPU, SIGXFSZ, SIGKILL, or an allocation refused under ulimit -v.
    const limited = proc.signalCode === "SIGXCPU" || proc.signalCode === "SIGXFSZ" || starved;
    throw new ToolFailed(`exited with ${proc.signalCode ?? code}${tail ? `: ${tail}` : ""}`, limited ? "limit" : "exit");
  } finally {
    clearTimeout(timer);
  }
}

/** ffprobe's JSON view of a file, read under the tight probe limits. */
export async function probeJson(tools: MediaTools, path: string): Promise<unknown> {
  const { stdout } = await runTool(
    tools.ffprobe,
    ["-v", "error", "-protocol_whitelist", "file", "-format_whitelist", INPUT_FORMATS, "-codec_whitelist", INPUT_CODECS, "-show_format", "-show_streams", "-of", "json", path],
    { limits: PROBE_LIMITS },
  );
  return JSON.parse(new TextDecoder().decode(stdout)) as unknown;
}
