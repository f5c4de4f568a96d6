import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * The packages a new project installs: its own three (core, server, sqlite) and the two the
 * server depends on. Each must come from the same folder, or npm would look for the missing one
 * on the registry.
 */
const NEEDED = ["core", "server", "sqlite", "client", "postgres"] as const;
/** Those the project's package.json names; the others are reached through `overrides`. */
const DIRECT = new Set<string>(["core", "server", "sqlite"]);

/** One release tarball, as `npm pack` names it: `tenxgraph-<name>-<version>.tgz`. */
export interface LocalTarball {
  /** The package, e.g. `@tenxgraph/core`. */
  packageName: string;
  /** The tarball's file name in `folder`. */
  file: string;
  /** True when the project's package.json names it (else only `overrides` does). */
  direct: boolean;
}

const TARBALL = /^tenxgraph-([a-z-]+?)-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\.tgz$/;

/**
 * The tarballs `tenxgraph init --from <from>` installs: `from` is a folder of tarballs (what
 * `npm run pack` writes) or a tenxgraph clone whose `packs/` holds them. Throws, naming the
 * folder and what is missing, when they are not all there exactly once.
 */
export function findLocalTarballs(from: string): { folder: string; tarballs: LocalTarball[] } {
  const given = resolve(process.cwd(), from);
  if (!existsSync(given)) throw new Error(`--from ${from}: no such folder (${given})`);
  const isClone = existsSync(join(given, "packages", "server", "package.json"));
  const folder = isClone ? join(given, "packs") : given;
  const files = existsSync(folder) ? readdirSync(folder) : [];
  const found = new Map<string, string[]>();
  for (const file of files) {
    const match = TARBALL.exec(file);
    if (match) found.set(match[1]!, [...(found.get(match[1]!) ?? []), file]);
  }
  if (isClone && found.size === 0) {
    throw new Error(
      `--from ${from}: a tenxgraph clone without release tarballs; run "npm run pack" in ${given} first`,
    );
  }
  const missing = NEEDED.filter((name) => !found.has(name));
  if (missing.length > 0) {
    throw new Error(
      `--from ${from}: ${folder} has no tarball of ${missing.map((n) => `@tenxgraph/${n}`).join(", ")} ` +
        `(it needs tenxgraph-<name>-<version>.tgz of ${NEEDED.join(", ")}, as "npm run pack" writes them)`,
    );
  }
  const doubled = NEEDED.filter((name) => found.get(name)!.length > 1);
  if (doubled.length > 0) {
    throw new Error(
      `--from ${from}: ${folder} holds several versions of ${doubled
        .map((n) => `@tenxgraph/${n} (${found.get(n)!.join(", ")})`)
        .join("; ")}; leave one of each`,
    );
  }
  const tarballs = NEEDED.map((name) => ({
    packageName: `@tenxgraph/${name}`,
    file: found.get(name)![0]!,
    direct: DIRECT.has(name),
  }));
  for (const tarball of tarballs) requireContents(from, folder, tarball);
  const versions = new Set(tarballs.map((t) => TARBALL.exec(t.file)![2]));
  if (versions.size > 1) {
    throw new Error(
      `--from ${from}: ${folder} mixes versions (${tarballs.map((t) => t.file).join(", ")}); ` +
        `the packages are released together: pack them from one clone`,
    );
  }
  return { folder, tarballs };
}

/**
 * The name says what a tarball should hold; its package.json says what it does. A file renamed
 * to look like ours (or a broken one) is refused before the project names it as a dependency.
 */
function requireContents(from: string, folder: string, tarball: LocalTarball): void {
  const version = TARBALL.exec(tarball.file)![2];
  let manifest: { name?: unknown; version?: unknown };
  try {
    const text = execFileSync(
      "tar",
      ["-xzOf", join(folder, tarball.file), "package/package.json"],
      {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    manifest = JSON.parse(text) as typeof manifest;
  } catch {
    throw new Error(
      `--from ${from}: ${tarball.file} is not a package tarball (no readable package/package.json)`,
    );
  }
  if (manifest.name !== tarball.packageName || manifest.version !== version) {
    throw new Error(
      `--from ${from}: ${tarball.file} holds ${String(manifest.name)}@${String(manifest.version)}, ` +
        `not ${tarball.packageName}@${version}`,
    );
  }
}
