/**
 * `npm run pack`: the release tarballs of every public package, built from this work tree, in
 * one folder (`packs/` by default; `npm run pack -- --out <folder>`). They are what `npm
 * publish` would upload; until the packages are on the registry, a project installs them with
 * `npx tenxgraph init my-agent --from <this clone or that folder>`.
 *
 * `--no-build` packs the `dist/` folders as they are (the tests, which built them already).
 * `--dry-run-publish` also runs `npm publish --dry-run` on each package (release readiness: the
 * files, exports, types and provenance fields npm checks), as CI does.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

interface Packed {
  name: string;
  filename: string;
}

/** The workspace folders whose package is published (not `"private": true`). */
function publicPackageFolders(root: string): string[] {
  const packages = join(root, "packages");
  return readdirSync(packages)
    .map((name) => join(packages, name))
    .filter((folder) => {
      const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
        private?: boolean;
      };
      return manifest.private !== true;
    })
    .sort();
}

interface PackOptions {
  out: string;
  build: boolean;
  dryRunPublish: boolean;
}

function parseArguments(argv: string[]): PackOptions {
  let out = join(repoRoot, "packs");
  let build = true;
  let dryRunPublish = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--out") {
      const folder = argv[++i];
      if (folder === undefined) throw new Error("pack: --out needs a folder");
      out = resolve(process.env.INIT_CWD ?? process.cwd(), folder);
    } else if (arg === "--dry-run-publish") dryRunPublish = true;
    else if (arg === "--no-build") build = false;
    else {
      throw new Error(
        `pack: unknown option ${arg} (options: --out <folder>, --no-build, --dry-run-publish)`,
      );
    }
  }
  return { out, build, dryRunPublish };
}

/**
 * `npm publish --dry-run` on every package. npm only warns when it has to change a package.json
 * to publish it (it dropped the server's `"./bin/…"` bin once, and said so in one warning line),
 * so any publish warning but the expected "not logged in" one fails the release check.
 */
function dryRunPublishAll(workspaces: string[]): void {
  const result = spawnSync("npm", ["publish", "--dry-run", ...workspaces], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  if (result.status !== 0) throw new Error(`pack: npm publish --dry-run exited ${result.status}`);
  const warnings = result.stderr
    .split("\n")
    .filter(
      (line) => /^npm warn publish /.test(line) && !/requires you to be logged in/.test(line),
    );
  if (warnings.length > 0) {
    throw new Error(`pack: npm publish --dry-run warned:\n${warnings.join("\n")}`);
  }
}

function main(): void {
  const { out, build, dryRunPublish } = parseArguments(process.argv.slice(2));
  const folders = publicPackageFolders(repoRoot);
  const workspaces = folders.flatMap((folder) => ["--workspace", relative(repoRoot, folder)]);
  if (build) {
    execFileSync("npm", ["run", "build", ...workspaces], { cwd: repoRoot, stdio: "inherit" });
  }
  // Old tarballs go first: a folder holding two versions of a package is refused by init.
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", out, ...workspaces], {
      cwd: repoRoot,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }),
  ) as Packed[];
  if (dryRunPublish) dryRunPublishAll(workspaces);
  const shown = relative(process.env.INIT_CWD ?? process.cwd(), out) || ".";
  const where = shown.startsWith("..") ? out : shown;
  process.stdout.write(
    `pack: ${packed.length} tarballs in ${where}/\n` +
      packed.map((p) => `  ${p.filename}  (${p.name})\n`).join("") +
      `A new project that installs from them: npx tenxgraph init my-agent --from ${where}\n`,
  );
}

main();
