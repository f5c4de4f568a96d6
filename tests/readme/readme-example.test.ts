import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

describe("README", () => {
  it("is a landing page of at most 15 KB: the details live in docs/", () => {
    expect(Buffer.byteLength(read("README.md"))).toBeLessThanOrEqual(15 * 1024);
  });

  it("shows examples/support-agent.ts exactly as it is", () => {
    const block = /```ts\n([\s\S]*?)```/.exec(read("README.md"))?.[1];
    expect(block).toBe(read("examples/support-agent.ts"));
  });

  it("runs the example as written: crash mid tool node, resume, charged once", async () => {
    // dist/ is built by the global setup, as `npm run example` builds it for a user.
    const { stdout } = await promisify(execFile)("npx", ["tsx", "examples/support-agent.ts"], {
      cwd: root,
      timeout: 120_000,
    });
    expect(stdout).toContain("crashed: worker killed");
    expect(stdout).toContain("completed | Order 4821 is charged and the receipt is on its way.");
    for (const name of ["lookup_order", "charge_card", "send_receipt"]) {
      expect(stdout).toContain(`ledger: ${name} completed attempt 1`);
    }
    expect(stdout).toContain(
      "outside world: [ 'charge 4821 (order-4821-charge)', 'receipt 4821' ]",
    );
    // ...and prints exactly the output the README shows under the example.
    const shown = /```ts\n[\s\S]*?```\n\nOutput:\n\n```\n([\s\S]*?)```/.exec(
      read("README.md"),
    )?.[1];
    expect(stdout).toBe(shown);
  }, 120_000);
});
