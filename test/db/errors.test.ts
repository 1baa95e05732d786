import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/connection.ts";
import { driverErrorCode, isReadOnlyRefusal } from "../../src/db/errors.ts";

/**
 * A serving thread's connection is read-only; a read route that tries to write there is passed
 * to the main thread when its error says SQLITE_READONLY (src/http/app.ts). The error comes
 * from bun:sqlite directly (raw SQL) or wrapped by drizzle (a converted service's builder):
 * both are recognised, and other failures are not.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function opened() {
  const dir = mkdtempSync(join(tmpdir(), "rookery-errors-"));
  dirs.push(dir);
  const writer = openDatabase(dir);
  const reader = openDatabase(dir, { readonly: true });
  return { writer, reader, close: () => (reader.close(), writer.close()) };
}

async function failure(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error("the statement did not fail");
}

test("a write on a read-only connection is recognised, raw or through a builder", async () => {
  const { reader, close } = opened();
  try {
    const raw = await failure(() => reader.port.run("INSERT INTO instance_settings (key, value) VALUES (?, ?)", ["k", "v"]));
    expect(isReadOnlyRefusal(raw)).toBe(true);
    const built = await failure(() => reader.port.orm.insert(reader.port.tables.instanceSettings).values({ key: "k", value: "v" }));
    // drizzle wraps the driver's error: the code is on its cause.
    expect((built as { code?: unknown }).code).toBeUndefined();
    expect(driverErrorCode(built)).toStartWith("SQLITE_READONLY");
    expect(isReadOnlyRefusal(built)).toBe(true);
  } finally {
    close();
  }
});

test("other failures are not taken for a read-only refusal", async () => {
  const { writer, reader, close } = opened();
  try {
    await writer.port.run("INSERT INTO instance_settings (key, value) VALUES (?, ?)", ["k", "v"]);
    const duplicate = await failure(() => writer.port.orm.insert(writer.port.tables.instanceSettings).values({ key: "k", value: "w" }));
    expect(driverErrorCode(duplicate)).toStartWith("SQLITE_CONSTRAINT");
    expect(isReadOnlyRefusal(duplicate)).toBe(false);
    const missing = await failure(() => reader.port.all("SELECT nothing FROM instance_settings", []));
    expect(isReadOnlyRefusal(missing)).toBe(false);
    expect(isReadOnlyRefusal(new Error("SQLITE_READONLY"))).toBe(false);
    expect(isReadOnlyRefusal(undefined)).toBe(false);
    // Nothing was written by the refused or failed statements.
    expect(await writer.port.all("SELECT key, value FROM instance_settings", [])).toEqual([{ key: "k", value: "v" }]);
  } finally {
    close();
  }
});
