import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;

interface PackageJson {
  name: string;
  private?: boolean;
  license?: string;
  repository?: { type: string; url: string; directory: string };
  publishConfig?: { access?: string };
  exports: Record<string, unknown>;
}

/** Every package a user can install: the workspace folders under packages/ not marked private. */
const published = readdirSync(join(root, "packages"))
  .map((folder) => ({
    folder,
    json: JSON.parse(
      readFileSync(join(root, "packages", folder, "package.json"), "utf8"),
    ) as PackageJson,
  }))
  .filter(({ json }) => !json.private);

// What a registry page and a user's tooling read: the license, where the source lives, that
// the package is public, and its package.json reachable through the exports map.
describe.each(published)("$json.name is ready to publish", ({ folder, json }) => {
  const dir = join(root, "packages", folder);

  it("declares Apache-2.0 and ships the license text and a changelog", () => {
    expect(json.license).toBe("Apache-2.0");
    expect(readFileSync(join(dir, "LICENSE"), "utf8")).toContain("Apache License");
    expect(existsSync(join(dir, "CHANGELOG.md"))).toBe(true);
  });

  it("names its repository folder, publishes publicly and exports ./package.json", () => {
    expect(json.repository?.directory).toBe(`packages/${folder}`);
    expect(json.publishConfig?.access).toBe("public");
    expect(json.exports["./package.json"]).toBe("./package.json");
  });

  it("packs the license and no declaration or source maps (the sources do not ship)", async () => {
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json"], { cwd: dir });
    const [packed] = JSON.parse(stdout) as { files: { path: string }[] }[];
    const paths = packed!.files.map((file) => file.path);
    expect(paths).toContain("LICENSE");
    expect(paths).toContain("CHANGELOG.md");
    expect(paths.filter((path) => path.endsWith(".map") || path.endsWith(".tsbuildinfo"))).toEqual(
      [],
    );
  });
});
