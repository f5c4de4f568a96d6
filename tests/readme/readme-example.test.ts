import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

describe("README", () => {
  it("shows examples/support-agent.ts exactly as it is", () => {
    const block = /```ts\n([\s\S]*?)```/.exec(read("README.md"))?.[1];
    expect(block).toBe(read("examples/support-agent.ts"));
  });

  it("runs the example as written: crash, resume, charged once", async () => {
    // dist/ is built by the global setup, as `npm run example` builds it for a user.
    const { stdout } = await promisify(execFile)("npx", ["tsx", "examples/support-agent.ts"], {
      cwd: root,
      timeout: 120_000,
    });
    expect(stdout).toContain("crashed: worker died");
    expect(stdout).toContain("completed | Done: order 4821 is charged.");
    expect(stdout).toContain("ledger: charge_card completed attempt 1");
    expect(stdout.match(/order 4821, key order-4821-charge/g)).toHaveLength(1);
  }, 120_000);
});
