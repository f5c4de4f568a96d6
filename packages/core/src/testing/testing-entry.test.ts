import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// vitest is not a dependency of @tenxgraph/core: shipped source (everything but tests and the
// test helpers in support/ folders) must not import it, or `@tenxgraph/core/testing` crashes without it.
const SRC = fileURLToPath(new URL("..", import.meta.url));
const VITEST_IMPORT = /from\s*["']vitest["']/;

function shippedSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "support" ? [] : shippedSources(path);
    const shipped = entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts");
    return shipped ? [path] : [];
  });
}

describe("@tenxgraph/core source", () => {
  const files = shippedSources(SRC);

  it("finds the shipped sources, including the testing entry and the conformance suite", () => {
    const names = files.map((file) => relative(SRC, file).split("\\").join("/"));
    expect(names).toContain("index.ts");
    expect(names).toContain("testing/index.ts");
    expect(names).toContain("testing/conformance/checkpointer-conformance.ts");
    expect(names).toContain("testing/conformance/state.ts");
    expect(names.some((name) => name.endsWith(".test.ts"))).toBe(false);
  });

  it("recognises an import of vitest", () => {
    expect(VITEST_IMPORT.test(`import { describe } from "vitest";`)).toBe(true);
    expect(VITEST_IMPORT.test(`import * as vitest from 'vitest';`)).toBe(true);
    expect(VITEST_IMPORT.test(`import { x } from "./vitest-like.js";`)).toBe(false);
  });

  it("has no file outside tests that imports vitest", () => {
    const importing = files
      .filter((file) => VITEST_IMPORT.test(readFileSync(file, "utf8")))
      .map((file) => relative(SRC, file));
    expect(importing).toEqual([]);
  });
});
