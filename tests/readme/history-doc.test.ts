import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

/** The TypeScript block of docs/history.md's section `heading`, and the output shown after it. */
function section(heading: string): { code: string | undefined; output: string | undefined } {
  const text = read("docs/history.md");
  const start = text.indexOf(`## ${heading}\n`);
  const body = text.slice(start, text.indexOf("\n## ", start + 1));
  const match = /```ts\n([\s\S]*?)```\n\nOutput[^:\n]*:\n\n```\n([\s\S]*?)```/.exec(body);
  return { code: match?.[1], output: match?.[2] };
}

// The block is examples/edit-messages.ts, which `npm run typecheck` compiles; here it runs.
describe("docs/history.md", () => {
  it("shows examples/edit-messages.ts exactly as it is", () => {
    expect(section("Editing and removing messages").code).toBe(read("examples/edit-messages.ts"));
  });

  it("runs the edit and removal example as written and prints what the page shows", async () => {
    // dist/ is built by the global setup.
    const { stdout } = await promisify(execFile)("npx", ["tsx", "examples/edit-messages.ts"], {
      cwd: root,
      timeout: 120_000,
    });
    expect(stdout).toBe(section("Editing and removing messages").output);
  }, 120_000);
});
