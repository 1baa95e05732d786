import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServeProcess } from "../support/serve-process.ts";

test("serve logs one line per request without secrets, and stops cleanly on SIGTERM", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-serve-"));
  // PORT=0: the OS picks a free port, which the start-up line names (no probe-then-bind race).
  const server = await startServeProcess([process.execPath, "src/main.ts", "serve"], {
    cwd: join(import.meta.dir, "..", ".."),
    env: { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_REQUESTS: "true" } as Record<string, string>,
  });
  try {
    const base = server.listen;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // No PUBLIC_URL: the public URL follows the port the kernel picked.
    expect(server.url).toBe(`http://localhost:${server.port}`);
    await fetch(`${base}/api/v1/accounts/verify_credentials?access_token=SECRET-TOKEN-123`, { headers: { authorization: "Bearer SECRET-TOKEN-456" } });
    await fetch(`${base}/oauth/token`, { method: "POST", body: new URLSearchParams({ grant_type: "password", password: "SECRET-PASSWORD" }) });
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    await server.ended;
    const out = server.output();
    expect(out).toContain(`msg="Rookery is listening"`);
    expect(out).toContain(`data=${dataDir}`);
    expect(out).toMatch(/msg=request method=GET path="\/api\/v1\/accounts\/verify_credentials\?access_token=%5BFILTERED%5D" status=401 ms=[\d.]+/);
    expect(out).toMatch(/msg=request method=POST path=\/oauth\/token status=401/);
    expect(out).toContain("msg=stopped");
    expect(out).not.toContain("SECRET");
  } finally {
    server.proc.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
});
