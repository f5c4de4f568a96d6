import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { initTemplate, type InitPackages } from "./init-template.js";
import { findLocalTarballs } from "./local-packages.js";

/** Where a project made with `--from` keeps its copies of the tarballs (committed with it). */
const VENDOR = "vendor/tenxgraph";

/**
 * `tenxgraph init [dir] [--from <folder>]`: writes a project serving the support agent
 * (graph.ts, tenxgraph.json, .env.example, a passing test). Refuses a non-empty folder unless
 * `force`. With `from` (a clone after `npm run pack`, or a folder of its tarballs), the project
 * installs the @tenxgraph packages from copies of those tarballs instead of the registry.
 */
export async function runInit(
  dir: string,
  { force, from }: { force: boolean; from?: string | undefined },
): Promise<void> {
  const target = resolve(process.cwd(), dir);
  // Checked before anything is written, so a wrong --from leaves no half-made project.
  const local = from === undefined ? undefined : findLocalTarballs(from);
  if (existsSync(target) && readdirSync(target).length > 0 && !force) {
    throw new Error(`${target} is not empty (use --force to write into it anyway)`);
  }
  const name =
    basename(target)
      .toLowerCase()
      .replace(/[^a-z0-9._-]/g, "-") || "tenxgraph-app";
  let packages: InitPackages = { versions: versions(), overrides: {} };
  if (local) {
    mkdirSync(join(target, VENDOR), { recursive: true });
    const spec: Record<string, string> = {};
    for (const tarball of local.tarballs) {
      copyFileSync(join(local.folder, tarball.file), join(target, VENDOR, tarball.file));
      spec[tarball.packageName] = `file:${VENDOR}/${tarball.file}`;
    }
    packages = {
      versions: {
        ...packages.versions,
        core: spec["@tenxgraph/core"]!,
        server: spec["@tenxgraph/server"]!,
        sqlite: spec["@tenxgraph/sqlite"]!,
      },
      // The server's own @tenxgraph dependencies must resolve to the copies too.
      overrides: spec,
    };
  }
  for (const [file, text] of Object.entries(initTemplate(name, packages))) {
    const path = join(target, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  const source = local ? ` (the @tenxgraph packages from ${VENDOR}/)` : "";
  console.log(
    `tenxgraph: created ${target}${source}\n  cd ${dir} && npm install && npm test && npx tenxgraph api`,
  );
}

/** Version ranges for the new project: this package's own, and the ones it depends on. */
function versions(): Record<string, string> {
  const own = JSON.parse(
    readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../../package.json"), "utf8"),
  ) as {
    version: string;
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
  };
  return {
    core: own.peerDependencies["@tenxgraph/core"]!,
    server: `^${own.version}`,
    sqlite: `^${own.version}`,
    tsx: own.dependencies.tsx!,
    zod: own.dependencies.zod!,
  };
}
