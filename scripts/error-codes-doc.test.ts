import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../packages/core/src/errors/codes.js";
import { DOC_PATH, renderErrorCodesDoc, sourceFiles } from "./error-codes-doc.js";

const root = new URL("../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

describe("docs/error-codes.md", () => {
  it("is what `npm run docs:errors` writes from the code today (run it after changing a code)", async () => {
    expect(read(DOC_PATH)).toBe(await renderErrorCodesDoc());
  }, 60_000);

  it("lists every code of ERROR_CODES", () => {
    const doc = read(DOC_PATH);
    for (const code of Object.keys(ERROR_CODES)) expect(doc).toContain(`| \`${code}\``);
  });

  it("changes when a code is added to the code, so a stale file fails the first test", async () => {
    const codes = "packages/core/src/errors/codes.ts";
    const added = (path: string) =>
      path === codes
        ? read(path).replace(
            "} as const;",
            '  /** A code added after the doc was written. */\n  NEW_001: "NEW_001",\n} as const;',
          )
        : read(path);
    const doc = await renderErrorCodesDoc(sourceFiles(), added);
    expect(doc).toContain("| `NEW_001`");
    expect(doc).toContain("A code added after the doc was written.");
    expect(doc).not.toBe(read(DOC_PATH));
  }, 60_000);

  it("reads the server's own codes and the client's", () => {
    const doc = read(DOC_PATH);
    for (const code of ["VALIDATION_ERROR", "NOT_FOUND", "INVALID_TOKEN", "CONNECTION_FAILED"]) {
      expect(doc).toContain(`| \`${code}\``);
    }
  });
});
