/**
 * Durable timers on a server of two graphs (`graphs`: `agent`, the default, and `other`, of
 * the same shape, each writing its id when it wakes): a thread that a run of `other` paused on
 * `ctx.sleep` is resumed under `other`, not the default graph: by the API process's timer
 * scheduler on SQLite, and by the run queue's delayed job on PostgreSQL.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import { afterAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { caller } from "../support/http.js";
import { wokenBy, writeSleepProject } from "./sleep-project.js";

const root = new URL("../../../", import.meta.url).pathname;
// Inside the repository (ignored by git), so the project's imports resolve to the workspace packages.
mkdirSync(join(root, ".tenxgraph"), { recursive: true });
const scratch = mkdtempSync(join(root, ".tenxgraph", "timers-graphs-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function until(check: () => boolean, what: string, output: () => string) {
  const giveUp = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > giveUp) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await sleep(50);
  }
}

/** A LangGraph run of `graphId` on a new thread, asking it to sleep `ms`. */
function napRun(graphId: string, ms: number) {
  return {
    assistant_id: graphId,
    input: { messages: [{ role: "user", content: String(ms) }] },
    if_not_exists: "create",
  };
}

describe("durable timers resume a thread under its own graph", () => {
  it("SQLite: the API's timer scheduler resumes a thread of a non-default graph under it", async () => {
    const { config, wokeLog } = writeSleepProject(join(scratch, "sqlite"), undefined, {
      twoGraphs: true,
    });
    const api = new CliProcess(["api", "--config", config, "--port", "0"], { cwd: scratch });
    try {
      const call = caller(await api.url());
      for (const [threadId, graphId] of [
        ["nap-other", "other"],
        ["nap-agent", "agent"],
      ] as const) {
        const paused = await call("POST", `/threads/${threadId}/runs/wait`, napRun(graphId, 300));
        expect(paused.status, paused.text).toBe(200);
      }
      const woke = () =>
        wokenBy(wokeLog, "nap-other").length + wokenBy(wokeLog, "nap-agent").length;
      await until(
        () => woke() === 2,
        "both timers",
        () => api.output,
      );
      expect(wokenBy(wokeLog, "nap-other")).toEqual(["other"]);
      expect(wokenBy(wokeLog, "nap-agent")).toEqual(["agent"]);
    } finally {
      await api.stop();
    }
  }, 60_000);

  it("PostgreSQL: the timer's delayed job queues the resuming run on the thread's graph", async () => {
    const dsn = await freshDatabase("timer_graphs");
    const { config, wokeLog } = writeSleepProject(
      join(scratch, "postgres"),
      { postgres_dsn: dsn, heartbeat_ms: 200, stale_after_ms: 1000, poll_interval_ms: 100 },
      { twoGraphs: true },
    );
    const worker = new CliProcess(["worker", "--config", config], { cwd: scratch });
    const api = new CliProcess(["api", "--config", config, "--port", "0", "--workers", "0"], {
      cwd: scratch,
    });
    const output = () => `${worker.output}\n---\n${api.output}`;
    try {
      await worker.waitFor(/worker (\S+) taking runs/);
      const call = caller(await api.url());
      const queued = await call("POST", "/threads/bg-other/runs", napRun("other", 300));
      expect(queued.status, queued.text).toBe(200);
      await until(() => wokenBy(wokeLog, "bg-other").length > 0, "the timer", output);
      await sleep(500); // a second resume would come within this
      expect(wokenBy(wokeLog, "bg-other")).toEqual(["other"]);
    } finally {
      await Promise.all([worker.stop(), api.stop()]);
    }
  }, 60_000);
});
