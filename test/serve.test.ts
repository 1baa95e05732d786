import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

test("serve logs one line per request without secrets, and stops cleanly on SIGTERM", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-serve-"));
  const port = await freePort();
  const proc = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
    cwd: join(import.meta.dir, ".."),
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_REQUESTS: "true" },
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      up = await fetch(`${base}/api/v1/streaming/health`).then((r) => r.ok, () => false);
      if (!up) await Bun.sleep(50);
    }
    expect(up).toBe(true);
    await fetch(`${base}/api/v1/accounts/verify_credentials?access_token=SECRET-TOKEN-123`, { headers: { authorization: "Bearer SECRET-TOKEN-456" } });
    await fetch(`${base}/oauth/token`, { method: "POST", body: new URLSearchParams({ grant_type: "password", password: "SECRET-PASSWORD" }) });
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const out = await new Response(proc.stdout).text();
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
