import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findLocalTarballs } from "./local-packages.js";

const scratch = mkdtempSync(join(tmpdir(), "tenxgraph-local-packages-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const ALL = ["core", "server", "sqlite", "client", "postgres", "models"];

/** A folder holding empty files named like `npm pack`'s tarballs. */
function folderOf(name: string, files: string[]): string {
  const folder = join(scratch, name);
  mkdirSync(folder, { recursive: true });
  for (const file of files) writeFileSync(join(folder, file), "");
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
});
