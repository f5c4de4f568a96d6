/**
 * Durable timers through `tenxgraph api` on a SQLite file: a run paused by `ctx.sleep` survives
 * a SIGKILL of the API process and is resumed once, at its time, by the processes started after
 * it (two share the file, so each resume is a race they must not both win). A thread answered
 * by a human before its time is not resumed again by its timer.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { caller, userMessage } from "../support/http.js";

const root = new URL("../../../", import.meta.url).pathname;
// Inside the repository (ignored by git), so the project's imports resolve to the workspace packages.
mkdirSync(join(root, ".tenxgraph"), { recursive: true });
const scratch = mkdtempSync(join(root, ".tenxgraph", "timers-cli-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * A graph whose node sleeps the number of milliseconds its user message says, then appends
 * `<thread> <pid>` to `woke.log` and answers "woke".
 */
function writeProject(dir: string): { config: string; wokeLog: string } {
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "tenxgraph.json");
  const wokeLog = join(dir, "woke.log");
  writeFileSync(
    config,
    JSON.stringify({ agent: "./graph.mjs:graph", checkpointer: "./store.mjs:checkpointer" }),
  );
  writeFileSync(
    join(dir, "store.mjs"),
    `import { SqliteCheckpointer } from "@tenxgraph/sqlite";
     export const checkpointer = new SqliteCheckpointer({ path: ${JSON.stringify(join(dir, "threads.db"))} });`,
  );
  writeFileSync(
    join(dir, "graph.mjs"),
    `import { appendFileSync } from "node:fs";
     import { END, Message, StateGraph } from "@tenxgraph/core";
     export const graph = new StateGraph()
       .addNode("NAP", async (state, ctx) => {
         await ctx.sleep(Number(state.messages.at(-1).content));
         appendFileSync(${JSON.stringify(wokeLog)}, ctx.threadId + " " + process.pid + "\\n");
         return Message.assistant("woke");
       })
       .addEdge("NAP", END)
       .setEntryPoint("NAP");`,
  );
  return { config, wokeLog };
}

/** The `woke.log` lines of `threadId`, as the pids that wrote them. */
function wakers(wokeLog: string, threadId: string): number[] {
  if (!existsSync(wokeLog)) return [];
  return readFileSync(wokeLog, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${threadId} `))
    .map((line) => Number(line.split(" ")[1]));
}

async function until(check: () => Promise<boolean> | boolean, what: string, output: () => string) {
  const giveUp = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await sleep(50);
  }
}

describe("tenxgraph api: durable timers on SQLite", () => {
  it("resumes a sleeping run once after a SIGKILL, and not a run answered before its time", async () => {
    const { config, wokeLog } = writeProject(join(scratch, "project"));
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

      await until(() => wakers(wokeLog, "nap").length > 0, "the timer's resume", output);
      expect(Date.now()).toBeGreaterThanOrEqual(wakeAt);
      // Past both wake times and a few scan passes: nothing more may wake.
      await sleep(Math.max(0, Date.parse(earlyTimer.resumeAt) - Date.now()) + 1500);
      const napWakers = wakers(wokeLog, "nap");
      expect(napWakers).toHaveLength(1);
      expect([second.child.pid, third.child.pid]).toContain(napWakers[0]);
      expect(wakers(wokeLog, "early")).toEqual([second.child.pid]);
      const napState = (await secondCall("GET", "/v1/threads/nap/state")).body.data.state;
      expect(napState.execution_meta.status).toBe("completed");
    } finally {
      await first.stop("SIGKILL");
      await Promise.all(others.map((other) => other.stop("SIGKILL")));
    }
  }, 60_000);
});
