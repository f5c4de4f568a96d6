/**
 * Durable timers through `tenxgraph api` on a SQLite file: a run paused by `ctx.sleep` survives
 * a SIGKILL of the API process and is resumed once, at its time, by the processes started after
 * it (two share the file, so each resume is a race they must not both win). A thread answered
 * by a human before its time is not resumed again by its timer.
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
const scratch = mkdtempSync(join(root, ".tenxgraph", "timers-cli-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function until(check: () => Promise<boolean> | boolean, what: string, output: () => string) {
  const giveUp = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await sleep(50);
  }
}

describe("tenxgraph api: durable timers on SQLite", () => {
  it("resumes a sleeping run once after a SIGKILL, and not a run answered before its time", async () => {
    const { config, wokeLog } = writeSleepProject(join(scratch, "project"));
    const api = () => new CliProcess(["api", "--config", config, "--port", "0"], { cwd: scratch });
    const first = api();
    const others: CliProcess[] = [];
    try {
      const call = caller(await first.url());
      const started = Date.now();
      const paused = await call("POST", "/v1/graph/invoke", {
        messages: [userMessage("2000")],
        config: { thread_id: "nap" },
      });
      expect(paused.status, paused.text).toBe(200);
      expect(paused.body.data.meta.status).toBe("interrupted");
      const [timer] = paused.body.data.meta.interrupts;
      expect(timer).toMatchObject({ value: { sleep_ms: 2000 }, node: "NAP" });
      const wakeAt = Date.parse(timer.resumeAt);
      expect(wakeAt).toBeGreaterThanOrEqual(started + 2000);
      const state = (await call("GET", "/v1/threads/nap/state")).body.data.state;
      expect(state.execution_meta.interrupt_data.interrupts[0].resumeAt).toBe(timer.resumeAt);

      await first.stop("SIGKILL");
      expect(Date.now()).toBeLessThan(wakeAt); // killed while the timer was armed in it
      expect(wakers(wokeLog, "nap")).toEqual([]);

      others.push(api(), api());
      const [second, third] = others as [CliProcess, CliProcess];
      const output = () => `${second.output}\n---\n${third.output}`;
      const secondCall = caller(await second.url());
      await third.url();
      // Answered by a human before its time: its timer must not run it again.
      const early = await secondCall("POST", "/v1/graph/invoke", {
        messages: [userMessage("1500")],
        config: { thread_id: "early" },
      });
      const earlyTimer = early.body.data.meta.interrupts[0];
      const answered = await secondCall("POST", "/v1/graph/invoke", {
        resume: "now",
        interrupt_id: earlyTimer.id,
        config: { thread_id: "early" },
      });
      expect(answered.body.data.meta.status, answered.text).toBe("completed");

      // Paused after both started: found by a later pass, not the first one's full read.
      const later = await secondCall("POST", "/v1/graph/invoke", {
        messages: [userMessage("800")],
        config: { thread_id: "later" },
      });
      expect(later.body.data.meta.status, later.text).toBe("interrupted");

      await until(() => wakers(wokeLog, "nap").length > 0, "the timer's resume", output);
      await until(() => wakers(wokeLog, "later").length > 0, "the later timer", output);
      expect(Date.now()).toBeGreaterThanOrEqual(wakeAt);
      // Past both wake times and a few scan passes: nothing more may wake.
      await sleep(Math.max(0, Date.parse(earlyTimer.resumeAt) - Date.now()) + 1500);
      const napWakers = wakers(wokeLog, "nap");
      expect(napWakers).toHaveLength(1);
      expect([second.child.pid, third.child.pid]).toContain(napWakers[0]);
      expect(wakers(wokeLog, "early")).toEqual([second.child.pid]);
      expect(wakers(wokeLog, "later")).toHaveLength(1);
      const napState = (await secondCall("GET", "/v1/threads/nap/state")).body.data.state;
      expect(napState.execution_meta.status).toBe("completed");
    } finally {
      await first.stop("SIGKILL");
      await Promise.all(others.map((other) => other.stop("SIGKILL")));
    }
  }, 60_000);
});
