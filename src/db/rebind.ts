import type { Database } from "bun:sqlite";

/**
 * SQLite 3.54 (Bun 1.4's) re-prepares a statement every time a parameter its planner looks at
 * is bound anew: one compared with a column (`col = ?`, `col IS ?`) in any statement that reads
 * two tables or more (a join, an EXISTS) or has an ORDER BY (`whereLoopOutputAdjust` asks
 * `sqlite3ExprIsInteger` with the parse context, which marks the variable "reprepare on bind"),
 * and a `LIMIT ?` or `OFFSET ?` of a join or an ordered read; Bun clears and rebinds every
 * parameter on every call. A re-prepare is a whole parse and plan: 3-35 µs a run, growing with
 * the statement's length (a home-feed delivery, 31 µs of which 30 were the re-prepare; a page
 * `ORDER BY id DESC LIMIT ?`, 3.4 µs against 0.3). Written `+?`, the parameter is an expression
 * SQLite does not look into: the same plan (the same indexes), the same comparison and limit (a
 * unary plus leaves a value and its lack of affinity as they are), and no re-prepare. 3.53 and
 * earlier never did this.
 *
 * So every statement this connection prepares has those parameters written that way, outside
 * string literals. Kept per SQL text (drizzle prepares its SQL anew for each query it
 * runs unless it is a prepared builder; hot raw SQL is built on each call in places).
 */
export function withoutReprepareOnBind(sqlite: Database): void {
  const prepare = sqlite.prepare.bind(sqlite);
  const query = sqlite.query.bind(sqlite);
  const rewritten = new Map<string, string>();
  const rewrite = (sql: string) => {
    let text = rewritten.get(sql);
    if (text === undefined) {
      text = unaryPlusParameters(sql);
      if (rewritten.size >= KEPT_TEXTS) rewritten.clear();
      rewritten.set(sql, text);
    }
    return text;
  };
  sqlite.prepare = ((sql: string, ...rest: unknown[]) => prepare(rewrite(sql), ...(rest as []))) as Database["prepare"];
  sqlite.query = ((sql: string) => query(rewrite(sql))) as Database["query"];
}

const KEPT_TEXTS = 2000;

/**
 * A string literal (kept as it is), or `=`/`==`/`IS`/`LIMIT`/`OFFSET` followed by a parameter
 * (`?`, `?N`, `$name`, `:name`, `@name`).
 */
const TOKENS = /'(?:[^']|'')*'|(?<![<>!=])(==?|\bIS|\bLIMIT|\bOFFSET)(\s*)(\?\d*|[$:@][A-Za-z_]\w*)/gi;

/** `col = ?` → `col = +?` (and `IS`, `LIMIT`, `OFFSET`), leaving string literals and other comparisons alone. */
export function unaryPlusParameters(sql: string): string {
  return sql.replace(TOKENS, (whole, operator: string | undefined, space: string, parameter: string) => (operator === undefined ? whole : `${operator}${space}+${parameter}`));
}
