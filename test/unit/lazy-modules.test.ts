import { expect, test } from "bun:test";
import { join } from "node:path";

/**
 * What the server loads at start-up is what `src/main.ts` reaches by static imports: Fedify,
 * its vocabulary and its JSON-LD, X.509 and Temporal stack (about a quarter of an idle server's
 * memory) must be reached only through `import()` (src/federation/lazy.ts); sharp, sanitize-html
 * and the HTML parser only by the `require` run at their first use (the first image, remote
 * HTML, link card). Read from the bundler's own graph of the build, as the executable is built.
 */
const ROOT = join(import.meta.dir, "..", "..");
const LAZY = /node_modules\/(@fedify\/|jsonld\/|pkijs\/|asn1js\/|@js-temporal\/|sharp\/|sanitize-html\/|postcss\/|htmlparser2\/)/;
// PostgreSQL's port, schema and migrations: an embedded server never loads them (server-postgres.ts is imported only with DATABASE_URL).
const POSTGRES_ONLY = /node_modules\/drizzle-orm\/bun-sql\/|src\/db\/schema-pg\/|src\/db\/postgres-port\.ts|src\/db\/to-postgres\//;

test("start-up reaches no module of Fedify's stack, nor sharp, sanitize-html or the HTML parser, nor PostgreSQL's port, by a static import", async () => {
  const built = await Bun.build({ entrypoints: [join(ROOT, "src/main.ts")], target: "bun", metafile: true, throw: true });
  const inputs = built.metafile!.inputs;
  const entry = Object.keys(inputs).find((path) => path.endsWith("src/main.ts"))!;
  // Each module reached, with the module that first imported it, for a readable chain.
  const from = new Map<string, string>([[entry, ""]]);
  const queue = [entry];
  while (queue.length > 0) {
    const path = queue.shift()!;
    for (const imported of inputs[path]?.imports ?? []) {
      if (imported.kind !== "import-statement" || imported.external || from.has(imported.path)) continue;
      from.set(imported.path, path);
      queue.push(imported.path);
    }
  }
  expect(from.size).toBeGreaterThan(300);
  // The graph does lead to them, through import(): the check above is not vacuous.
  expect(Object.keys(inputs).some((path) => path.includes("node_modules/@fedify/fedify/"))).toBe(true);
  const chain = (path: string) => {
    const steps: string[] = [];
    for (let at = path; at !== ""; at = from.get(at)!) steps.push(at.replace(`${ROOT}/`, ""));
    return steps.join(" <- ");
  };
  expect([...from.keys()].filter((path) => LAZY.test(path) || POSTGRES_ONLY.test(path)).map(chain)).toEqual([]);
});
