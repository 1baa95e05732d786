import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mediaTools, probeJson, runTool, ToolFailed } from "../../src/media-files/ffmpeg.ts";

// The bounds ffmpeg runs under (src/media-files/ffmpeg.ts), each made to bite.

const tools = await mediaTools(tmpdir());
if (!tools) throw new Error("no ffmpeg for the tests");
const lavfi = (seconds: number) => ["-nostdin", "-v", "error", "-f", "lavfi", "-i", `testsrc2=size=640x480:rate=30:duration=${seconds}`];
const generous = { timeoutMs: 60_000, cpuSeconds: 60, memoryMb: 3072, fileMb: 64 };

describe("runTool", () => {
  test("a run past its wall-clock deadline is killed", async () => {
    const started = performance.now();
    const run = runTool(tools.ffmpeg, [...lavfi(600), "-f", "null", "-"], { limits: { ...generous, timeoutMs: 300 } });
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFailed);
    expect((error as ToolFailed).reason).toBe("timeout");
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  test("a run that writes past its file bound is stopped (SIGXFSZ)", async () => {
    const out = join(tmpdir(), `rookery-fsize-${process.pid}.nut`);
    const error = await runTool(tools.ffmpeg, [...lavfi(5), "-c:v", "rawvideo", "-f", "nut", "-y", out], { limits: { ...generous, fileMb: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFailed);
    expect((error as ToolFailed).reason).toBe("limit");
    expect(Bun.file(out).size).toBeLessThanOrEqual(1024 * 1024);
    await Bun.file(out).delete();
  });

  test("a run that asks for more memory than its bound fails", async () => {
    // 8K frames at 48 bits a pixel (200 MB each) under a 150 MB address space: the allocation is refused.
    const error = await runTool(tools.ffmpeg, ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=size=7680x4320:rate=5:duration=1", "-vf", "format=rgb48", "-f", "null", "-"], {
      limits: { ...generous, memoryMb: 150 },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFailed);
    expect((error as ToolFailed).reason).toBe("limit");
  });

  test("the tool sees an empty environment: no secrets of the server's reach it", async () => {
    process.env.ROOKERY_TEST_SECRET = "do-not-leak";
    try {
      const { stdout } = await runTool("/usr/bin/env", []).catch(async () => runTool("/bin/sh", ["-c", "env"]));
      expect(new TextDecoder().decode(stdout)).not.toContain("do-not-leak");
    } finally {
      delete process.env.ROOKERY_TEST_SECRET;
    }
  });

  test("inputs are read only through the demuxers and protocols an upload may use", async () => {
    // An HLS playlist that points at a local file: the classic way to make ffmpeg read /etc/passwd.
    const playlist = join(tmpdir(), `rookery-hls-${process.pid}.m3u8`);
    await Bun.write(playlist, "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n");
    // Through the probe every upload meets first: refused, not followed.
    const error = await probeJson(tools, playlist).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFailed);
    expect(String(error)).toContain("not on whitelist");
    await Bun.file(playlist).delete();
  });
});
