import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The repository's root, as a path. */
export const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * What a TypeScript block in the docs is, from its fence's info string (docs/development.md,
 * "Code in the docs"):
 *
 * - ` ```ts ` — a whole program: type-checked alone (no prelude) and run;
 * - ` ```ts fragment ` — a piece of a program: type-checked with the names of
 *   tests/readme/fragment-prelude.ts standing for what the page set up before it, not run;
 * - ` ```ts unchecked ` — another library's code, shown for comparison: neither checked nor
 *   run. It may not import `@tenxgraph/*`.
 */
export type BlockKind = "program" | "fragment" | "unchecked";

/** One TypeScript block of a Markdown page. */
export interface DocBlock {
  /** The page, from the repository's root (`docs/history.md`). */
  page: string;
  /** The line of the page the code starts on (the line after the fence). */
  line: number;
  kind: BlockKind;
  /** The code, without the list indentation a block inside a list item has. */
  code: string;
  /**
   * What a program prints, when the page shows it: an `Output:` block right after the block,
   * or the `// ` comment lines ending the block right after its last `console.log`.
   */
  output: string | null;
}

/** The pages whose TypeScript blocks the tests check: README.md, docs/ and the package READMEs. */
export function docPages(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  const packages = readdirSync(join(ROOT, "packages"))
    .map((name) => `packages/${name}/README.md`)
    .filter((page) => {
      try {
        readFileSync(join(ROOT, page));
        return true;
      } catch {
        return false;
      }
    });
  return ["README.md", ...docs.sort(), ...packages.sort()];
}

const FENCE = /^( *)```(\S*)(.*)$/;
const TS_LANGUAGES = new Set(["ts", "typescript", "tsx"]);
const KINDS: Record<string, BlockKind> = {
  "": "program",
  fragment: "fragment",
  unchecked: "unchecked",
};

/** Every TypeScript block of `page`; an unknown info string after `ts` is an error naming it. */
export function docBlocks(page: string): DocBlock[] {
  const lines = readFileSync(join(ROOT, page), "utf8").split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, language, info] = open;
    const end = lines.findIndex((text, j) => j > i && text.trimStart().startsWith("```"));
    if (end === -1) throw new Error(`${page}:${i + 1}: the code block is never closed`);
    if (TS_LANGUAGES.has(language!)) {
      const kind = KINDS[info!.trim()];
      if (kind === undefined) {
        throw new Error(
          `${page}:${i + 1}: unknown fence info "${info!.trim()}" (use \`ts\`, \`ts fragment\` or \`ts unchecked\`)`,
        );
      }
      const body = lines.slice(i + 1, end).map((text) => text.slice(indent!.length));
      const code = `${body.join("\n")}\n`;
      blocks.push({ page, line: i + 2, kind, code, output: shownOutput(lines, end, body) });
    }
    i = end;
  }
  return blocks;
}

/** Every TypeScript block of every page the tests check. */
export function allDocBlocks(): DocBlock[] {
  return docPages().flatMap(docBlocks);
}

/** `page:line`, how a failure names a block. */
export function blockName(block: DocBlock): string {
  return `${block.page}:${block.line}`;
}

function shownOutput(lines: string[], end: number, body: string[]): string | null {
  const after = /^\s*\nOutput[^:\n]*:\n\n```\n([\s\S]*?)```/.exec(lines.slice(end + 1).join("\n"));
  if (after) return after[1]!;
  let first = body.length;
  while (first > 0 && body[first - 1]!.startsWith("// ")) first--;
  if (first === body.length || first === 0 || !body[first - 1]!.includes("console.log")) {
    return null;
  }
  return body
    .slice(first)
    .map((text) => `${text.slice(3)}\n`)
    .join("");
}
