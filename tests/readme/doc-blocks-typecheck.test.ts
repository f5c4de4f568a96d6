import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { allDocBlocks, blockName, ROOT, type DocBlock } from "./doc-blocks.js";

const PRELUDE = join(ROOT, "tests/readme/fragment-prelude.ts");
/** Where the blocks seem to live: beside this file, so `@tenxgraph/*` resolve to the workspace. */
const BLOCK_DIR = join(ROOT, "tests/readme/.doc-blocks");

/**
 * The file a block is checked as. A program is a module as it stands. A fragment's code after
 * its imports runs inside an async function (a fragment may `return` or `await`, as the body
 * of a node or a handler would), opened on the imports' last line so line numbers stay the
 * page's.
 */
function blockSource(block: DocBlock): string {
  if (block.kind === "program") return `${block.code}export {};\n`;
  const parsed = ts.createSourceFile("block.ts", block.code, ts.ScriptTarget.Latest);
  const imports = parsed.statements.filter(ts.isImportDeclaration);
  const end = imports.length > 0 ? imports.at(-1)!.end : 0;
  const opening = " export async function fragment() {";
  return `${block.code.slice(0, end)}${opening}${block.code.slice(end)}}\n`;
}

/** Type-checks every checked block in one program; the blocks exist only in memory. */
function checkBlocks(blocks: DocBlock[]): { program: ts.Program; files: Map<string, DocBlock> } {
  const files = new Map(blocks.map((b) => [join(BLOCK_DIR, fileName(b)), b]));
  const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), (p) => ts.sys.readFile(p));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const host = ts.createCompilerHost({ ...options, noEmit: true });
  const sourceOf = (path: string) => {
    const block = files.get(path);
    return block ? blockSource(block) : undefined;
  };
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (path, language, ...rest) => {
    const text = sourceOf(path);
    return text === undefined
      ? getSourceFile.call(host, path, language, ...rest)
      : ts.createSourceFile(path, text, language);
  };
  host.fileExists = (path) => files.has(path) || fileExists.call(host, path);
  host.readFile = (path) => sourceOf(path) ?? readFile.call(host, path);
  const program = ts.createProgram([PRELUDE, ...files.keys()], { ...options, noEmit: true }, host);
  return { program, files };
}

function fileName(block: DocBlock): string {
  return `${block.page.replace(/[/.]/g, "_")}_${block.line}.ts`;
}

/** A diagnostic as `page:line: message`, on the page's lines. */
function describeDiagnostic(d: ts.Diagnostic, files: Map<string, DocBlock>): string {
  const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
  if (!d.file || d.start === undefined) return message;
  const { line } = d.file.getLineAndCharacterOfPosition(d.start);
  const block = files.get(d.file.fileName);
  return block
    ? `${block.page}:${block.line + line}: ${message}`
    : `${d.file.fileName}: ${message}`;
}

/** Places where a program uses a name that only the fragments' prelude declares. */
function preludeNamesUsed(program: ts.Program, files: Map<string, DocBlock>): string[] {
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const [path, block] of files) {
    if (block.kind !== "program") continue;
    const source = program.getSourceFile(path)!;
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node)) {
        const symbol = ts.isShorthandPropertyAssignment(node.parent)
          ? checker.getShorthandAssignmentValueSymbol(node.parent)
          : checker.getSymbolAtLocation(node);
        const declarations = symbol?.declarations ?? [];
        if (declarations.some((d) => d.getSourceFile().fileName === PRELUDE)) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
          found.push(
            `${block.page}:${block.line + line}: '${node.text}' is not declared (only a fragment may use the prelude's names)`,
          );
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe("TypeScript blocks in README.md, docs/ and the package READMEs", () => {
  const blocks = allDocBlocks();

  it("finds the blocks, each marked as a program, a fragment or another library's code", () => {
    expect(blocks.filter((b) => b.kind === "program").length).toBeGreaterThan(5);
    expect(blocks.filter((b) => b.kind === "fragment").length).toBeGreaterThan(5);
    // Our own code is always checked: only another library's may be shown unchecked.
    const ours = blocks.filter((b) => b.kind === "unchecked" && /@tenxgraph\//.test(b.code));
    expect(ours.map(blockName)).toEqual([]);
  });

  it("type-checks every program and fragment against the built packages, in one program", () => {
    const { program, files } = checkBlocks(blocks.filter((b) => b.kind !== "unchecked"));
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => !d.file || d.file.fileName === PRELUDE || files.has(d.file.fileName));
    expect(diagnostics.map((d) => describeDiagnostic(d, files))).toEqual([]);
    // A program runs as written: the prelude's names would be undefined there.
    expect(preludeNamesUsed(program, files)).toEqual([]);
  }, 120_000);
});
