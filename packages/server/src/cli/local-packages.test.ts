import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findLocalTarballs } from "./local-packages.js";

const scratch = mkdtempSync(join(tmpdir(), "tenxgraph-local-packages-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const ALL = ["core", "server", "sqlite", "client", "postgres", "models"];

/**
 * A folder holding files named like `npm pack`'s tarballs. A `.tgz` is a real tarball whose
 * package.json matches its name, unless `holds` gives it another package.json (or "" for a file
 * that is no tarball at all).
 */
function folderOf(name: string, files: string[], holds: Record<string, object | ""> = {}): string {
  const folder = join(scratch, name);
  mkdirSync(folder, { recursive: true });
  for (const file of files) {
    const match = /^tenxgraph-([a-z-]+?)-(.+)\.tgz$/.exec(file);
    const manifest =
      holds[file] ?? (match && { name: `@tenxgraph/${match[1]}`, version: match[2] });
    if (!manifest) {
      writeFileSync(join(folder, file), "");
      continue;
    }
    const source = mkdtempSync(join(scratch, "tarball-"));
    mkdirSync(join(source, "package"));
    writeFileSync(join(source, "package", "package.json"), JSON.stringify(manifest));
    execFileSync("tar", ["-czf", join(folder, file), "-C", source, "package"]);
  }
  return folder;
}

describe("findLocalTarballs (tenxgraph init --from)", () => {
  it("finds the five tarballs a project needs and marks the three it names", () => {
    const folder = folderOf(
      "packs",
      ALL.map((n) => `tenxgraph-${n}-0.2.0-rc.1.tgz`),
    );
    const { tarballs } = findLocalTarballs(folder);
    expect(tarballs.map((t) => [t.packageName, t.file, t.direct])).toEqual([
      ["@tenxgraph/core", "tenxgraph-core-0.2.0-rc.1.tgz", true],
      ["@tenxgraph/server", "tenxgraph-server-0.2.0-rc.1.tgz", true],
      ["@tenxgraph/sqlite", "tenxgraph-sqlite-0.2.0-rc.1.tgz", true],
      ["@tenxgraph/client", "tenxgraph-client-0.2.0-rc.1.tgz", false],
      ["@tenxgraph/postgres", "tenxgraph-postgres-0.2.0-rc.1.tgz", false],
    ]);
  });

  it("reads a clone's packs/ folder", () => {
    const clone = folderOf("clone", []);
    folderOf("clone/packages/server", ["package.json"]);
    folderOf(
      "clone/packs",
      ALL.map((n) => `tenxgraph-${n}-0.1.0.tgz`),
    );
    expect(findLocalTarballs(clone).folder).toBe(join(clone, "packs"));
  });

  it("tells a clone without tarballs to run npm run pack", () => {
    const clone = folderOf("bare-clone", []);
    folderOf("bare-clone/packages/server", ["package.json"]);
    expect(() => findLocalTarballs(clone)).toThrow(/run "npm run pack" in .*bare-clone first/);
  });

  it("names the missing packages, and a package found twice", () => {
    const partial = folderOf("partial", ["tenxgraph-core-0.1.0.tgz", "tenxgraph-server-0.1.0.tgz"]);
    expect(() => findLocalTarballs(partial)).toThrow(
      /no tarball of @tenxgraph\/sqlite, @tenxgraph\/client, @tenxgraph\/postgres/,
    );
    const doubled = folderOf("doubled", [
      ...ALL.map((n) => `tenxgraph-${n}-0.1.0.tgz`),
      "tenxgraph-core-0.2.0.tgz",
    ]);
    expect(() => findLocalTarballs(doubled)).toThrow(
      /several versions of @tenxgraph\/core \(tenxgraph-core-0.1.0.tgz, tenxgraph-core-0.2.0.tgz\)/,
    );
    expect(() => findLocalTarballs(join(scratch, "nowhere"))).toThrow(/no such folder/);
  });

  it("refuses a tarball whose contents are not what its name says, and mixed versions", () => {
    const good = ALL.map((n) => `tenxgraph-${n}-0.1.0.tgz`);
    const foreign = folderOf("foreign", good, {
      "tenxgraph-core-0.1.0.tgz": { name: "left-pad", version: "0.1.0" },
    });
    expect(() => findLocalTarballs(foreign)).toThrow(
      /tenxgraph-core-0.1.0.tgz holds left-pad@0.1.0, not @tenxgraph\/core@0.1.0/,
    );
    const notTar = folderOf("not-tar", good, { "tenxgraph-server-0.1.0.tgz": "" });
    expect(() => findLocalTarballs(notTar)).toThrow(
      /tenxgraph-server-0.1.0.tgz is not a package tarball/,
    );
    const mixed = folderOf("mixed", [
      ...ALL.filter((n) => n !== "sqlite").map((n) => `tenxgraph-${n}-0.1.0.tgz`),
      "tenxgraph-sqlite-0.2.0.tgz",
    ]);
    expect(() => findLocalTarballs(mixed)).toThrow(/mixes versions/);
  });
});
