import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable } from "../support/postgres.ts";
import { eventually } from "../support/wait.ts";

/**
 * The tests' throwaway PostgreSQL (test/support/postgres.ts) is one cluster per `bun test`
 * process even when every file gets a module registry of its own (`--isolate`, or `--parallel`
 * without `--no-isolate`): it was one per file, each left running until the process ended. And it
 * is stopped once that process has ended.
 */
test.skipIf(!postgresAvailable)("three isolated files of one bun test process share one cluster, stopped after the process ends", async () => {
  const probe = "./test/fixtures/pg-cluster-probe.ts";
  // The suite's timeout: the first file starts the cluster (initdb, start, the template's
  // migrations), which took longer than bun's default 5 s on a loaded machine.
  const run = Bun.spawn([process.execPath, "test", "--timeout", "60000", "--isolate", probe, probe, probe], { stdout: "pipe", stderr: "pipe", env: { ...process.env, ROOKERY_TEST_DATABASE: "" } });
  const [out, err] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text()]);
  expect({ exit: await run.exited, output: `${out}\n${err}` }).toMatchObject({ exit: 0 });
  const lines = `${out}\n${err}`.split("\n").filter((l) => l.startsWith("cluster "));
  expect(lines).toHaveLength(3);
  expect(new Set(lines).size).toBe(1);
  const pid = lines[0]!.split(" ")[2]!;
  const file = join(tmpdir(), `rookery-pg-cluster-${pid}`);
  // Its watchdog stops it within a second or so of the process's end.
  await eventually(() => !existsSync(file), "the cluster of the ended process to be stopped", 20_000);
});
