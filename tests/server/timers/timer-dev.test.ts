/**
 * `tenxgraph dev` runs durable timers as `tenxgraph api` does on SQLite (its child process is
 * `tenxgraph api`, which starts the timer scheduler): a run paused by `ctx.sleep` wakes up.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { caller, userMessage } from "../support/http.js";
import { wakers, writeSleepProject } from "./sleep-project.js";

const root = new URL("../../../", import.meta.url).pathname;
// Inside the repository (ignored by git), so the project's imports resolve to the workspace packages.
mkdirSync(join(root, ".tenxgraph"), { recursive: true });
const scratch = mkdtempSync(join(root, ".tenxgraph", "timers-dev-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("tenxgraph dev: durable timers", () => {
  it("wakes a run paused by ctx.sleep", async () => {
    const { config, wokeLog } = writeSleepProject(join(scratch, "project"));
    const dev = new CliProcess(["dev", "--config", config, "--port", "0"], { cwd: scratch });
    try {
      const call = caller(await dev.url());
      const paused = await call("POST", "/v1/graph/invoke", {
        messages: [userMessage("300")],
        config: { thread_id: "dev-nap" },
      });
      expect(paused.status, paused.text).toBe(200);
      expect(paused.body.data.meta.status).toBe("interrupted");
      const giveUp = Date.now() + 30_000;
      while (wakers(wokeLog, "dev-nap").length === 0) {
        if (Date.now() > giveUp) throw new Error(`the timer never fired:\n${dev.output}`);
        await sleep(50);
      }
      expect(wakers(wokeLog, "dev-nap")).toHaveLength(1);
    } finally {
      await dev.stop();
    }
  }, 60_000);
});
