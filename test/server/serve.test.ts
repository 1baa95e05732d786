import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "../support/wait.ts";

/** Everything a stream has produced so far, read in the background. */
function collect(stream: ReadableStream<Uint8Array>) {
  const out = { text: "", done: false };
  void (async () => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) out.text += decoder.decode(read.value, { stream: true });
    out.done = true;
  })();
  return out;
}

test("serve logs one line per request without secrets, and stops cleanly on SIGTERM", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-serve-"));
  // PORT=0: the OS picks a free port, which the start-up line names (no probe-then-bind race).
  const proc = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
    cwd: join(import.meta.dir, "..", ".."),
    env: { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_REQUESTS: "true" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = collect(proc.stdout);
  try {
    // Up once it says so (a busy machine takes its time to start a process).
    await waitFor(() => stdout.text.includes(`msg="Rookery is listening"`) || stdout.done, 20_000, "the start-up line");
    const base = stdout.text.match(/ listen=(\S+)/)?.[1];
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await fetch(`${base}/api/v1/accounts/verify_credentials?access_token=SECRET-TOKEN-123`, { headers: { authorization: "Bearer SECRET-TOKEN-456" } });
    await fetch(`${base}/oauth/token`, { method: "POST", body: new URLSearchParams({ grant_type: "password", password: "SECRET-PASSWORD" }) });
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    await waitFor(() => stdout.done, undefined, "the end of the output");
    const out = stdout.text;
    expect(out).toContain(`msg="Rookery is listening"`);
    expect(out).toContain(`data=${dataDir}`);
    expect(out).toMatch(/msg=request method=GET path="\/api\/v1\/accounts\/verify_credentials\?access_token=%5BFILTERED%5D" status=401 ms=[\d.]+/);
    expect(out).toMatch(/msg=request method=POST path=\/oauth\/token status=401/);
    expect(out).toContain("msg=stopped");
    expect(out).not.toContain("SECRET");
  } finally {
    proc.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
});
