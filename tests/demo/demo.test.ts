import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const demo = fileURLToPath(new URL("../../examples/demo/demo.ts", import.meta.url));
const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
// The demo writes ./.tenxgraph/threads.db: run it in a folder of its own.
const cwd = mkdtempSync(join(tmpdir(), "tenxgraph-demo-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const runDemo = () => promisify(execFile)(tsx, [demo], { cwd, timeout: 60_000 });

describe("npm run demo", () => {
  it("kills worker 1 mid tool node and charges once after worker 2 continues", async () => {
    const { stdout } = await runDemo();
    expect(stdout).toContain("worker 1 killed with SIGKILL");
    expect(stdout).toMatch(/charge_card +replayed from the ledger, not run: Charged 42 USD/);
    expect(stdout).toContain("send_receipt: IN DOUBT (attempt 1 was claimed by the dead worker");
    expect(stdout).toMatch(/charge_card +completed +attempt 1 +charge_card:order-4821-charge/);
    expect(stdout).toMatch(/send_receipt +completed +attempt 2/);
    expect(stdout.match(/payment provider: charged order 4821/g)).toHaveLength(1);
    expect(stdout).toContain("Charged once, though the worker died mid tool node.");
  }, 60_000);

  it("runs again on the same database file from a clean thread", async () => {
    const { stdout } = await runDemo();
    expect(stdout).toContain("run ends: completed at version 5");
    expect(stdout.match(/payment provider: charged order 4821/g)).toHaveLength(1);
  }, 60_000);
});
