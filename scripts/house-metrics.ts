/**
 * The house's measures (issue 28): how costly the tree is to change, printed as a table so two
 * commits can be compared. `npm run house:metrics`. Figures only, no verdict: the targets are in
 * docs/architecture.md.
 *
 * - product files over 400 lines (tests and test support left out);
 * - names exported by `@tenxgraph/core` (`.`), and how many of them `./storage` exports too;
 * - copies of each PostgreSQL function's text (`CREATE [OR REPLACE] FUNCTION name`);
 * - folder cycles in core and the server: pairs of folders that import each other;
 * - allowed exceptions in .dependency-cruiser.cjs (`pathNot` on a layer's targets);
 * - loose files at the server's src/, which should be laid out in folders by job.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const ROOT = new URL("..", import.meta.url).pathname;
const TEST_FILE = /\.test\.ts$|test-support\.ts$|\/testing\//;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

const productFiles = readdirSync(join(ROOT, "packages"))
  .map((pkg) => join(ROOT, "packages", pkg, "src"))
  .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory())
  .flatMap(sourceFiles)
  .filter((file) => !TEST_FILE.test(file));

function longFiles(): string[] {
  return productFiles
    .map((file) => ({ file, lines: readFileSync(file, "utf8").split("\n").length - 1 }))
    .filter(({ lines }) => lines > 400)
    .map(({ file, lines }) => `${relative(ROOT, file)} (${lines})`);
}

/** Every name an entry exports, types included, as the compiler resolves them. */
function exportedNames(entry: string): string[] {
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowJs: false,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  const symbol = source && checker.getSymbolAtLocation(source);
  return symbol ? checker.getExportsOfModule(symbol).map((s) => s.getName()) : [];
}

function functionCopies(): Map<string, number> {
  const copies = new Map<string, number>();
  for (const file of productFiles.filter(
    (f) => f.includes("/packages/postgres/") || f.includes("/packages/server/"),
  )) {
    for (const match of readFileSync(file, "utf8").matchAll(
      /CREATE (?:OR REPLACE )?FUNCTION\s+([a-z_.]+)/gi,
    )) {
      copies.set(match[1]!, (copies.get(match[1]!) ?? 0) + 1);
    }
  }
  return copies;
}

/** Pairs of folders (first level under src/) of one package that import each other. */
function folderCycles(pkg: string): string[] {
  const out = execFileSync(
    "npx",
    [
      "depcruise",
      `packages/${pkg}/src`,
      "--config",
      ".dependency-cruiser.cjs",
      "--output-type",
      "json",
    ],
    { cwd: ROOT, maxBuffer: 1 << 28, encoding: "utf8" },
  );
  const folderOf = (path: string) => {
    const m = new RegExp(`^packages/${pkg}/src/([^/]+)/`).exec(path);
    return m ? m[1]! : null;
  };
  const edges = new Set<string>();
  for (const mod of JSON.parse(out).modules as {
    source: string;
    dependencies: { resolved: string }[];
  }[]) {
    if (TEST_FILE.test(mod.source)) continue;
    const from = folderOf(mod.source);
    for (const dep of mod.dependencies) {
      const to = folderOf(dep.resolved);
      if (from && to && from !== to) edges.add(`${from}>${to}`);
    }
  }
  return [...edges]
    .filter((e) => {
      const [a, b] = e.split(">");
      return a! < b! && edges.has(`${b}>${a}`);
    })
    .map((e) => e.replace(">", " <-> "));
}

const core = exportedNames(join(ROOT, "packages/core/src/index.ts"));
const storage = new Set(exportedNames(join(ROOT, "packages/core/src/storage/index.ts")));
const long = longFiles();
const copies = functionCopies();
const exceptions = (
  readFileSync(join(ROOT, ".dependency-cruiser.cjs"), "utf8").match(/pathNot: `\$\{CORE\}/g) ?? []
).length;

console.log(`| measure | value |\n|---|---|`);
console.log(
  `| product files over 400 lines | ${long.length}${long.length ? `: ${long.join(", ")}` : ""} |`,
);
console.log(`| names exported by @tenxgraph/core | ${core.length} |`);
console.log(`| ... of them also in ./storage | ${core.filter((n) => storage.has(n)).length} |`);
console.log(
  `| copies of each PostgreSQL function | ${[...copies].map(([name, n]) => `${name} ${n}`).join(", ")} |`,
);
console.log(`| exceptions in the core's layer rules | ${exceptions} |`);
const loose = readdirSync(join(ROOT, "packages/server/src")).filter(
  (name) => name.endsWith(".ts") && !TEST_FILE.test(name) && name !== "index.ts",
);
console.log(`| loose files at packages/server/src (besides index.ts) | ${loose.length} |`);
for (const pkg of ["core", "server"]) {
  const cycles = folderCycles(pkg);
  console.log(
    `| folder pairs importing each other in ${pkg} | ${cycles.length}${cycles.length ? `: ${cycles.join(", ")}` : ""} |`,
  );
}
