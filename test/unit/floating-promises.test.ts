import { expect, test } from "bun:test";
import * as ts from "typescript";

/**
 * Services moved from bun:sqlite's synchronous API to the asynchronous database port (issue
 * 31): a call that used to finish before the next line now returns a promise, and a caller that
 * does not await it goes on before the write is done (or closes the database under it: the
 * group commit's flush at shutdown was one). So in src/ a promise is awaited, returned, or let
 * go on purpose, written `void promise` (or handled with `.catch`/`.then`/`.finally`); and a
 * function that returns a promise is never passed where a callback's result is ignored (an
 * event listener, a `forEach`), since nothing would wait for it. Checked with TypeScript's
 * types over the whole program.
 */

const config = ts.getParsedCommandLineOfConfigFile(ts.findConfigFile(process.cwd(), ts.sys.fileExists, "tsconfig.json")!, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
const program = ts.createProgram(config.fileNames.filter((f) => f.includes("/src/")), config.options);
const checker = program.getTypeChecker();

function isPromise(type: ts.Type | undefined): boolean {
  if (!type) return false;
  if (type.isUnion()) return type.types.some(isPromise);
  return (type.getSymbol() ?? type.aliasSymbol)?.name === "Promise";
}

/** `p.catch(...)`, `p.then(a, b)`, `p.finally(...)`: the promise's outcome is handled there. */
function handled(call: ts.Expression): boolean {
  if (!ts.isCallExpression(call) || !ts.isPropertyAccessExpression(call.expression)) return false;
  const name = call.expression.name.text;
  return name === "catch" || name === "finally" || (name === "then" && call.arguments.length === 2);
}

function where(node: ts.Node): string {
  const file = node.getSourceFile();
  const { line } = file.getLineAndCharacterOfPosition(node.getStart());
  return `${file.fileName.slice(file.fileName.indexOf("/src/") + 1)}:${line + 1}: ${node.getText().replace(/\s+/g, " ").slice(0, 100)}`;
}

test("no promise in src/ is dropped without being awaited, returned or marked void", () => {
  const dropped: string[] = [];
  const ignoredCallbacks: string[] = [];
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || !file.fileName.includes("/src/")) continue;
    const visit = (node: ts.Node) => {
      if (ts.isExpressionStatement(node)) {
        const e = node.expression;
        // `a && f()` / `a || f()` as a statement: the call's result is dropped the same way.
        const call = ts.isBinaryExpression(e) && (e.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken || e.operatorToken.kind === ts.SyntaxKind.BarBarToken) ? e.right : e;
        if ((ts.isCallExpression(call) || ts.isNewExpression(call)) && !handled(call) && isPromise(checker.getTypeAtLocation(call))) dropped.push(where(node));
      }
      if (ts.isCallExpression(node)) {
        const signature = checker.getResolvedSignature(node);
        node.arguments.forEach((arg, i) => {
          if (!ts.isArrowFunction(arg) && !ts.isFunctionExpression(arg)) return;
          if (!isPromise(checker.getTypeAtLocation(arg).getCallSignatures()[0]?.getReturnType())) return;
          const params = signature?.parameters ?? [];
          const param = params[Math.min(i, params.length - 1)];
          if (!param) return;
          const expected = checker.getTypeOfSymbolAtLocation(param, node).getCallSignatures()[0]?.getReturnType();
          if (expected && checker.typeToString(expected) === "void") ignoredCallbacks.push(where(arg));
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  expect(dropped).toEqual([]);
  expect(ignoredCallbacks).toEqual([]);
}, 120_000);
