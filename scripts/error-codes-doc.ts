/**
 * `npm run docs:errors`: writes docs/error-codes.md from the code, so the list of codes a user
 * reads is the list the code raises. Sources, all read as TypeScript syntax (nothing is built or
 * imported):
 *
 * - `ERROR_CODES` in packages/core/src/errors/codes.ts: every runtime code and its JSDoc;
 * - the `TenxgraphError` subclasses in packages/*\/src: which class carries which code;
 * - `statusOfCode` in packages/server/src/http/api-error.ts: the HTTP status the server answers with;
 * - every `new ApiError(status, "CODE", message)` in packages/server/src: the server's own codes;
 * - every `code: "CODE"` the client sets itself in packages/client/src, with the JSDoc of the
 *   client's `ApiErrorCode` type.
 *
 * `scripts/error-codes-doc.test.ts` fails when the committed file differs from what this writes.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";
import ts from "typescript";

/** Reads a file of the repository by its path from the root; tests pass their own. */
export type ReadFile = (path: string) => string;

const ROOT = fileURLToPath(new URL("../", import.meta.url));
export const DOC_PATH = "docs/error-codes.md";
const CODES_PATH = "packages/core/src/errors/codes.ts";
const STATUS_PATH = "packages/server/src/http/api-error.ts";
/** Packages that name core codes (the client's types, the server's status map) but raise none. */
const NAMES_ONLY = /^packages\/(client|server)\//;

interface CoreCode {
  code: string;
  meaning: string;
  classes: string[];
  packages: string[];
  status: number;
}

interface ServerCode {
  code: string;
  statuses: string[];
  messages: string[];
  files: string[];
}

/** The source files of every package, without tests, as paths from the root. */
export function sourceFiles(root = ROOT): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/\.ts$/.test(entry.name) && !/\.test\.ts$|test-support/.test(entry.name))
        files.push(path);
    }
  };
  for (const pkg of readdirSync(join(root, "packages"))) walk(`packages/${pkg}/src`);
  return files.sort();
}

/** The Markdown of docs/error-codes.md, formatted as Prettier would. */
export async function renderErrorCodesDoc(
  files = sourceFiles(),
  read: ReadFile = (path) => readFileSync(join(ROOT, path), "utf8"),
): Promise<string> {
  const parse = (path: string) =>
    ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true);
  const sources = files.map(parse);
  const core = coreCodes(parse(CODES_PATH), sources, statusRules(parse(STATUS_PATH)));
  const server = serverCodes(sources.filter((s) => s.fileName.startsWith("packages/server/")));
  const client = clientCodes(sources.filter((s) => s.fileName.startsWith("packages/client/")));
  const text = [
    "# Error codes",
    "",
    "<!-- Written by `npm run docs:errors` (scripts/error-codes-doc.ts) from the code; do not edit. -->",
    "",
    "Every error tenxgraph raises carries a stable string code, and a published code never changes",
    'meaning. Check the code, not the class: `isTenxgraphError(e) && e.code === "STORAGE_CONFLICT_001"`',
    'in process, `isClientError(e, "STORAGE_CONFLICT_001")` with the client. A tool\'s failure is',
    "not thrown: it becomes a tool message the model reads, `Tool 'x' failed: [CODE] ...`",
    "([tools and the ledger](tools-and-ledger.md#failures)).",
    "",
    "## Runtime and stores",
    "",
    `Listed in \`${CODES_PATH}\` (\`ERROR_CODES\`, exported by \`@tenxgraph/core\`). _Class_ is the`,
    "error that carries the code; _HTTP_ is the status `@tenxgraph/server` answers with when a",
    "request meets it (`statusOfCode`; see [the HTTP server](http.md)).",
    "",
    row(["code", "meaning", "class", "raised in", "HTTP"]),
    row(["---", "---", "---", "---", "---"]),
    ...core.map((c) =>
      row([
        `\`${c.code}\``,
        c.meaning,
        c.classes.map((name) => `\`${name}\``).join(", "),
        c.packages.join(", "),
        String(c.status),
      ]),
    ),
    "",
    "## HTTP server",
    "",
    "Codes of `@tenxgraph/server`'s own, answered in its error envelope",
    '(`{"error": {"code", "message", "details"}, "metadata": {"request_id", …}}`) beside the codes',
    "above. _Message_ shows what the server says (`…` stands for a value).",
    "",
    row(["code", "HTTP", "message", "raised in"]),
    row(["---", "---", "---", "---"]),
    ...server.map((c) =>
      row([
        `\`${c.code}\``,
        c.statuses.join(", "),
        c.messages.map((m) => `"${m}"`).join("; "),
        c.files.map((f) => `\`${f}\``).join(", "),
      ]),
    ),
    "",
    "## Client",
    "",
    "Codes `@tenxgraph/client` sets itself, for failures met before or outside a server's answer. An",
    "answer that carries no error envelope gets `HTTP_<status>`.",
    "",
    row(["code", "meaning", "raised in"]),
    row(["---", "---", "---"]),
    ...client.map((c) => row([`\`${c.code}\``, c.meaning, `\`${c.file}\``])),
    "",
  ].join("\n");
  const options = await prettier.resolveConfig(join(ROOT, DOC_PATH));
  return prettier.format(text, { ...options, parser: "markdown" });
}

function row(cells: string[]): string {
  return `| ${cells.map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`;
}

/** `ERROR_CODES`' entries in order, each with its JSDoc, classes, packages and HTTP status. */
function coreCodes(
  codes: ts.SourceFile,
  sources: ts.SourceFile[],
  status: (code: string) => number,
): CoreCode[] {
  const object = findVariable(codes, "ERROR_CODES");
  const names = object.properties.map((p) => {
    if (!ts.isPropertyAssignment(p)) throw new Error(`${CODES_PATH}: unexpected ${p.getText()}`);
    return { name: p.name.getText(), meaning: jsDocText(p) };
  });
  const classes = codeClasses(
    sources,
    names.map((n) => n.name),
  );
  return names.map(({ name, meaning }) => ({
    code: name,
    meaning,
    classes: classes.get(name) ?? [],
    packages: [
      ...new Set(
        sources
          .filter((s) => s.fileName !== CODES_PATH && !NAMES_ONLY.test(s.fileName))
          .filter((s) => s.text.includes(`"${name}"`))
          .map((s) => `\`@tenxgraph/${s.fileName.split("/")[1]}\``),
      ),
    ],
    status: status(name),
  }));
}

/** The object literal `export const <name> = { ... } as const` holds. */
function findVariable(source: ts.SourceFile, name: string): ts.ObjectLiteralExpression {
  let found: ts.ObjectLiteralExpression | undefined;
  source.forEachChild(function visit(node) {
    if (ts.isVariableDeclaration(node) && node.name.getText() === name && node.initializer) {
      let init: ts.Expression = node.initializer;
      while (ts.isAsExpression(init) || ts.isParenthesizedExpression(init)) init = init.expression;
      if (ts.isObjectLiteralExpression(init)) found = init;
    }
    node.forEachChild(visit);
  });
  if (!found) throw new Error(`${source.fileName}: no object literal named ${name}`);
  return found;
}

/** The JSDoc text right before `node`, on one line. */
function jsDocText(node: ts.Node): string {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  return oneLine(docs.map((d) => ts.getTextOfJSDocComment(d.comment) ?? "").join(" "));
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * Which `TenxgraphError` subclass carries which code, read from each constructor's `super(code,
 * …)`: a literal, a conditional between literals, or a parameter typed as a union of literals or
 * as `Extract<ErrorCode, "X" | `PREFIX_${string}`>`.
 */
function codeClasses(sources: ts.SourceFile[], all: string[]): Map<string, string[]> {
  const byCode = new Map<string, string[]>();
  for (const source of sources) {
    source.forEachChild(function visit(node) {
      if (ts.isClassDeclaration(node) && node.name && extendsTenxgraphError(node)) {
        const ctor = node.members.find(ts.isConstructorDeclaration);
        const call = ctor && superCall(ctor);
        const first = call?.arguments[0];
        if (ctor && first) {
          for (const code of codesOf(first, ctor, all)) {
            byCode.set(code, [...(byCode.get(code) ?? []), node.name.text]);
          }
        }
      }
      node.forEachChild(visit);
    });
  }
  return byCode;
}

function extendsTenxgraphError(node: ts.ClassDeclaration): boolean {
  return (node.heritageClauses ?? []).some((clause) =>
    clause.types.some((t) => t.expression.getText() === "TenxgraphError"),
  );
}

function superCall(ctor: ts.ConstructorDeclaration): ts.CallExpression | undefined {
  let found: ts.CallExpression | undefined;
  ctor.body?.forEachChild(function visit(node) {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword) {
      found = node;
    }
    node.forEachChild(visit);
  });
  return found;
}

function codesOf(
  expression: ts.Expression,
  ctor: ts.ConstructorDeclaration,
  all: string[],
): string[] {
  if (ts.isStringLiteral(expression)) return [expression.text];
  if (ts.isConditionalExpression(expression)) {
    return [
      ...codesOf(expression.whenTrue, ctor, all),
      ...codesOf(expression.whenFalse, ctor, all),
    ];
  }
  if (ts.isIdentifier(expression)) {
    const param = ctor.parameters.find((p) => p.name.getText() === expression.text);
    if (param?.type) return codesOfType(param.type, all);
  }
  throw new Error(`cannot read the code of super(${expression.getText()}, …)`);
}

function codesOfType(type: ts.TypeNode, all: string[]): string[] {
  if (ts.isUnionTypeNode(type)) return type.types.flatMap((t) => codesOfType(t, all));
  if (ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) return [type.literal.text];
  if (ts.isTemplateLiteralTypeNode(type)) {
    return all.filter((code) => code.startsWith(type.head.text));
  }
  if (ts.isTypeReferenceNode(type) && type.typeName.getText() === "Extract" && type.typeArguments) {
    return codesOfType(type.typeArguments[1]!, all);
  }
  throw new Error(`cannot read the codes of the type ${type.getText()}`);
}

/**
 * `statusOfCode` as data: its `if (…) return N;` lines, each condition a `||` of
 * `code === "X"` and `code.startsWith("P")`, then the final `return N`.
 */
function statusRules(source: ts.SourceFile): (code: string) => number {
  let body: ts.Block | undefined;
  source.forEachChild((node) => {
    if (ts.isFunctionDeclaration(node) && node.name?.text === "statusOfCode") body = node.body;
  });
  if (!body) throw new Error(`${STATUS_PATH}: no function statusOfCode`);
  const rules: { matches: (code: string) => boolean; status: number }[] = [];
  for (const statement of body.statements) {
    if (ts.isIfStatement(statement) && ts.isReturnStatement(statement.thenStatement)) {
      rules.push({
        matches: condition(statement.expression),
        status: Number(statement.thenStatement.expression!.getText()),
      });
    } else if (ts.isReturnStatement(statement) && statement.expression) {
      rules.push({ matches: () => true, status: Number(statement.expression.getText()) });
    } else {
      throw new Error(`${STATUS_PATH}: cannot read ${statement.getText()}`);
    }
  }
  return (code) => rules.find((rule) => rule.matches(code))!.status;
}

function condition(expression: ts.Expression): (code: string) => boolean {
  if (ts.isBinaryExpression(expression)) {
    const op = expression.operatorToken.kind;
    if (op === ts.SyntaxKind.BarBarToken) {
      const [left, right] = [condition(expression.left), condition(expression.right)];
      return (code) => left(code) || right(code);
    }
    if (op === ts.SyntaxKind.EqualsEqualsEqualsToken && ts.isStringLiteral(expression.right)) {
      const literal = expression.right.text;
      return (code) => code === literal;
    }
  }
  if (
    ts.isCallExpression(expression) &&
    expression.expression.getText() === "code.startsWith" &&
    ts.isStringLiteral(expression.arguments[0]!)
  ) {
    const prefix = (expression.arguments[0] as ts.StringLiteral).text;
    return (code) => code.startsWith(prefix);
  }
  throw new Error(`${STATUS_PATH}: cannot read the condition ${expression.getText()}`);
}

/** Every `new ApiError(status, "CODE", message)` with a literal code, grouped by code. */
function serverCodes(sources: ts.SourceFile[]): ServerCode[] {
  const byCode = new Map<string, ServerCode>();
  for (const source of sources) {
    source.forEachChild(function visit(node) {
      if (
        ts.isNewExpression(node) &&
        node.expression.getText() === "ApiError" &&
        node.arguments?.[1] &&
        ts.isStringLiteral(node.arguments[1])
      ) {
        const [status, code, message] = node.arguments;
        const entry = byCode.get(code.text) ?? {
          code: code.text,
          statuses: [],
          messages: [],
          files: [],
        };
        const statusText = ts.isNumericLiteral(status!) ? status.text : "the exception's";
        const file = relative("packages/server/src", source.fileName);
        const said = message && messageText(message);
        if (!entry.statuses.includes(statusText)) entry.statuses.push(statusText);
        if (said && !entry.messages.includes(said)) entry.messages.push(said);
        if (!entry.files.includes(file)) entry.files.push(file);
        byCode.set(code.text, entry);
      }
      node.forEachChild(visit);
    });
  }
  return [...byCode.values()].sort((a, b) => a.code.localeCompare(b.code));
}

/** A message argument as a reader sees it: literal text, `…` for each interpolated value. */
function messageText(node: ts.Expression): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) {
    return node.head.text + node.templateSpans.map((span) => `…${span.literal.text}`).join("");
  }
  return null;
}

/** The codes the client sets itself (`code: "CODE"`), with the JSDoc of its `ApiErrorCode` type. */
function clientCodes(sources: ts.SourceFile[]) {
  const docs = new Map<string, string>();
  const found: { code: string; meaning: string; file: string }[] = [];
  for (const source of sources) {
    source.forEachChild(function visit(node) {
      if (ts.isTypeAliasDeclaration(node) && node.name.text === "ApiErrorCode") {
        let previousEnd = node.type.getStart();
        for (const member of ts.isUnionTypeNode(node.type) ? node.type.types : []) {
          const between = source.text.slice(previousEnd, member.getStart());
          const doc = /\/\*\*([\s\S]*?)\*\//.exec(between)?.[1];
          if (doc && ts.isLiteralTypeNode(member) && ts.isStringLiteral(member.literal)) {
            docs.set(member.literal.text, oneLine(doc.replace(/^\s*\*/gm, "")));
          }
          previousEnd = member.getEnd();
        }
      }
      if (
        ts.isPropertyAssignment(node) &&
        node.name.getText() === "code" &&
        ts.isStringLiteral(node.initializer)
      ) {
        const file = relative("packages/client/src", source.fileName);
        found.push({ code: node.initializer.text, meaning: "", file });
      }
      node.forEachChild(visit);
    });
  }
  return found
    .map((entry) => ({ ...entry, meaning: docs.get(entry.code) ?? "" }))
    .sort((a, b) => a.code.localeCompare(b.code));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  writeFileSync(join(ROOT, DOC_PATH), await renderErrorCodesDoc());
  console.log(`wrote ${DOC_PATH}`);
}
