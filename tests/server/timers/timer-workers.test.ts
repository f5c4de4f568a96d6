/**
 * Durable timers on the PostgreSQL run queue: a background run paused by `ctx.sleep` queues a
 * delayed job; the worker that ran it is SIGKILLed before the time, and the other worker resumes
 * the thread once, at its time, in a run of its own. A thread paused by a foreground invoke gets
 * its job from the API process's scan.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import { afterAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { caller, userMessage } from "../support/http.js";
import { wakers, writeSleepProject } from "./sleep-project.js";

const root = new URL("../../../", import.meta.url).pathname;
// Inside the repository (ignored by git), so the project's imports resolve to the workspace packages.
mkdirSync(join(root, ".tenxgraph"), { recursive: true });
const scratch = mkdtempSync(join(root, ".tenxgraph", "timers-workers-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("durable timers on the run queue", () => {
  it("resumes the run once, on the surviving worker, when the worker that paused it is SIGKILLed", async () => {
    const dsn = await freshDatabase("timer_workers");
    const { config, wokeLog } = writeSleepProject(join(scratch, "project"), {
      postgres_dsn: dsn,
      heartbeat_ms: 200,
      stale_after_ms: 1000,
      poll_interval_ms: 100,
    });
    const workers = [0, 1].map(
      () => new CliProcess(["worker", "--config", config], { cwd: scratch }),
    );
    const api = new CliProcess(["api", "--config", config, "--port", "0", "--workers", "0"], {
      cwd: scratch,
    });
    const output = () => workers.map((w) => w.output).join("\n---\n");
    try {
      const ids = await Promise.all(
        workers.map(async (w) => (await w.waitFor(/worker (\S+) taking runs/))[1]!),
      );
      const call = caller(await api.url());
      const posted = await call("POST", "/v1/threads/nap/runs", {
        messages: [userMessage("2000")],
      });
      expect(posted.status, posted.text).toBe(202);
      const runId = posted.body.data.run_id as string;
      const paused = await call("GET", `/v1/threads/nap/runs/${runId}/join`);
      expect(paused.body.data.status, output()).toBe("interrupted");
      const holder = ids.indexOf(paused.body.data.worker_id as string);
      await workers[holder]!.stop("SIGKILL");
      const state = (await call("GET", "/v1/threads/nap/state")).body.data.state;
      const resumeAt = Date.parse(state.execution_meta.interrupt_data.interrupts[0].resumeAt);
      expect(Date.now()).toBeLessThan(resumeAt); // killed before the time
      expect(wakers(wokeLog, "nap")).toEqual([]);

      // Paused outside the queue (a foreground invoke): the API's scan queues its timer's job.
      const foreground = await call("POST", "/v1/graph/invoke", {
        messages: [userMessage("1000")],
        config: { thread_id: "fg" },
      });
      expect(foreground.body.data.meta.status, foreground.text).toBe("interrupted");

      const giveUp = Date.now() + 30_000;
      while (wakers(wokeLog, "nap").length === 0 || wakers(wokeLog, "fg").length === 0) {
        if (Date.now() > giveUp) throw new Error(`the timer never fired:\n${output()}`);
        await sleep(50);
      }
      expect(Date.now()).toBeGreaterThanOrEqual(resumeAt);
      await sleep(1500); // a few polls more: nothing else may resume it
      expect(wakers(wokeLog, "nap")).toEqual([workers[1 - holder]!.child.pid]);
      expect(wakers(wokeLog, "fg")).toEqual([workers[1 - holder]!.child.pid]);
      const fgRuns = (await call("GET", "/v1/threads/fg/runs")).body.data.runs;
      expect(fgRuns.map((run: { status: string }) => run.status)).toEqual(["completed"]);
      const runs = (await call("GET", "/v1/threads/nap/runs")).body.data.runs as {
        run_id: string;
        status: string;
        worker_id: string;
      }[];
      expect(runs.map((run) => run.status)).toEqual(["completed", "interrupted"]);
      expect(runs[0]!.worker_id).toBe(ids[1 - holder]);
      const messages = (await call("GET", "/v1/threads/nap/messages")).body.data.messages;
      expect(messages.at(-1).content[0].text).toBe("woke");
    } finally {
      await Promise.all([...workers.map((w) => w.stop("SIGKILL")), api.stop()]);
    }
  }, 90_000);
});
