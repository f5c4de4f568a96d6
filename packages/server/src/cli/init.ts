import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { initTemplate } from "./init-template.js";

/**
 * `tenxgraph init [dir]`: writes a project serving the support agent (graph.ts, tenxgraph.json,
 * .env.example, a passing test). Refuses a non-empty folder unless `force`.
 */
export async function runInit(dir: string, { force }: { force: boolean }): Promise<void> {
  const target = resolve(process.cwd(), dir);
  if (existsSync(target) && readdirSync(target).length > 0 && !force) {
    throw new Error(`${target} is not empty (use --force to write into it anyway)`);
  }
  const name =
    basename(target)
      .toLowerCase()
      .replace(/[^a-z0-9._-]/g, "-") || "tenxgraph-app";
  for (const [file, text] of Object.entries(initTemplate(name, versions()))) {
    const path = join(target, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  console.log(
    `tenxgraph: created ${target}\n  cd ${dir} && npm install && npm test && npx tenxgraph api`,
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
