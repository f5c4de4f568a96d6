import { describe, expect, it } from "vitest";
import { Command } from "../definition/command.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { interrupt } from "../node/interrupt.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { ofType, pause } from "../support/helpers.js";
import type { StreamEvent } from "../events/stream-event.js";
import { entrypoint, task, type TaskInDoubtPolicy } from "./index.js";

/** Rejects with a coded error? Returns its code and message. */
async function codeOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isTenxgraphError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("resolved, expected a coded rejection");
}

/** Two counted tasks, `add_one` and `double`, and the runs of each. */
function countedTasks() {
  const runs = { add_one: 0, double: 0 };
  const addOne = task("add_one", (n: number) => {
    runs.add_one += 1;
    return n + 1;
  });
  const double = task("double", (n: number) => {
    runs.double += 1;
    return n * 2;
  });
  return { runs, addOne, double };
}

describe("entrypoint and task", () => {
  it("runs the tasks in order, returns the output and records each task in the ledger", async () => {
    const { runs, addOne, double } = countedTasks();
    const workflow = entrypoint({ name: "math" }, async (n: number) => double(await addOne(n)));

    const result = await workflow.invoke(3, { threadId: "t-1" });

    expect(result).toMatchObject({ status: "completed", output: 8 });
    expect(runs).toEqual({ add_one: 1, double: 1 });
    const ledger = await workflow.graph.getToolLedger({ threadId: "t-1" });
    expect(ledger.map((e) => [e.toolName, e.status, e.attempt])).toEqual([
      ["add_one", "completed", 1],
      ["double", "completed", 1],
    ]);
    expect(ledger.map((e) => e.key)).toEqual([
      expect.stringMatching(/^task:\d+:0:add_one$/),
      expect.stringMatching(/^task:\d+:1:double$/),
    ]);
  });

  it("replays finished tasks on resume after interrupt(), and runs the rest once", async () => {
    const { runs, addOne, double } = countedTasks();
    const workflow = entrypoint({ name: "approve" }, async (n: number) => {
      const one = await addOne(n);
      const ok = interrupt<boolean>(one, { message: "Double it?" });
      return ok ? double(one) : one;
    });
    const config = { threadId: "t-resume" };

    const paused = await workflow.invoke(1, config);
    expect(paused).toMatchObject({ status: "interrupted", output: undefined });
    expect(paused.interrupts).toMatchObject([{ value: 2, message: "Double it?" }]);
    const done = await workflow.invoke(new Command({ resume: true }), config);

    expect(done).toMatchObject({ status: "completed", output: 4 });
    expect(runs).toEqual({ add_one: 1, double: 1 });
  });

  it("takes { resume } as every graph does, besides new Command({ resume })", async () => {
    const workflow = entrypoint({ name: "plain_resume" }, () => interrupt<string>("name?"));
    await workflow.invoke(undefined, { threadId: "t-plain" });
    const done = await workflow.invoke({ resume: "Ada" }, { threadId: "t-plain" });
    expect(done).toMatchObject({ status: "completed", output: "Ada" });
  });

  it("pauses in an interrupt() inside a task, and the task's answer is its recorded result", async () => {
    let asked = 0;
    const ask = task("ask", (question: string) => {
      asked += 1;
      return interrupt<string>(question);
    });
    const workflow = entrypoint({ name: "asker" }, async () => `${await ask("name?")}!`);

    const paused = await workflow.invoke(undefined, { threadId: "t-ask" });
    expect(paused.interrupts).toMatchObject([{ value: "name?" }]);
    const done = await workflow.invoke(new Command({ resume: "Ada" }), { threadId: "t-ask" });

    expect(done.output).toBe("Ada!");
    expect(asked).toBe(2); // code before interrupt() runs again on resume, as in a tool
    const ledger = await workflow.graph.getToolLedger({ threadId: "t-ask" });
    expect(ledger).toMatchObject([{ toolName: "ask", status: "completed" }]);
  });

  it("continues a failed run with the finished tasks replayed, not run again", async () => {
    const { runs, addOne, double } = countedTasks();
    let failOnce = true;
    const workflow = entrypoint({ name: "flaky" }, async (n: number) => {
      const one = await addOne(n);
      if (failOnce) {
        failOnce = false;
        throw new Error("the process fell over");
      }
      return double(one);
    });

    await expect(workflow.invoke(5, { threadId: "t-flaky" })).rejects.toThrow("fell over");
    const done = await workflow.invoke(null, { threadId: "t-flaky" });

    expect(done.output).toBe(12);
    expect(runs).toEqual({ add_one: 1, double: 1 });
  });

  it("keys tasks by the run: the next invoke on the thread runs them again, with `previous`", async () => {
    const { runs, addOne } = countedTasks();
    const previous: unknown[] = [];
    const workflow = entrypoint({ name: "again" }, async (n: number, ctx) => {
      previous.push(ctx.previous);
      return addOne(n);
    });

    await workflow.invoke(1, { threadId: "t-again" });
    const second = await workflow.invoke(10, { threadId: "t-again" });

    expect(second.output).toBe(11);
    expect(runs.add_one).toBe(2);
    expect(previous).toEqual([undefined, 2]);
  });

  it("gives tasks started together their places by call order, on every replay", async () => {
    const { runs, addOne, double } = countedTasks();
    let failOnce = true;
    const workflow = entrypoint({ name: "fan" }, async (n: number) => {
      const [a, b] = await Promise.all([addOne(n), double(n)]);
      if (failOnce) {
        failOnce = false;
        throw new Error("crash after both");
      }
      return [a, b];
    });

    await expect(workflow.invoke(4, { threadId: "t-fan" })).rejects.toThrow("crash after both");
    const done = await workflow.invoke(null, { threadId: "t-fan" });

    expect(done.output).toEqual([5, 8]);
    expect(runs).toEqual({ add_one: 1, double: 1 });
  });

  it("waits for a task it did not await: recorded before the node ends", async () => {
    const slow = task("slow", async () => {
      await pause(30);
      return "late";
    });
    const workflow = entrypoint({ name: "fire_and_forget" }, () => {
      void slow();
      return "returned first";
    });

    const result = await workflow.invoke(undefined, { threadId: "t-forget" });

    expect(result.output).toBe("returned first");
    const ledger = await workflow.graph.getToolLedger({ threadId: "t-forget" });
    expect(ledger).toMatchObject([{ toolName: "slow", status: "completed" }]);
  });

  it("streams each task as a tool_start and a tool_result, replayed ones marked", async () => {
    const { addOne } = countedTasks();
    let failOnce = true;
    const workflow = entrypoint({ name: "streamed" }, async (n: number) => {
      const one = await addOne(n);
      if (failOnce) {
        failOnce = false;
        throw new Error("once");
      }
      return one;
    });
    await expect(workflow.invoke(1, { threadId: "t-stream" })).rejects.toThrow("once");

    const events: StreamEvent[] = [];
    for await (const event of workflow.stream(null, { threadId: "t-stream" })) events.push(event);

    expect(ofType(events, "tool_result")).toMatchObject([
      { toolName: "add_one", replayed: true, isError: false },
    ]);
  });
});

describe("task failures and bad input", () => {
  it("records a task's failure: FUNC_003, and a replay fails the same without running it", async () => {
    let runs = 0;
    const boom = task("boom", () => {
      runs += 1;
      throw new Error("card declined");
    });
    const seen: string[] = [];
    let failOnce = true;
    const workflow = entrypoint({ name: "catcher" }, async () => {
      const { code, message } = await codeOf(boom());
      seen.push(`${code} ${message}`);
      if (failOnce) {
        failOnce = false;
        throw new Error("crash after the failure");
      }
      return "handled";
    });

    await expect(workflow.invoke(undefined, { threadId: "t-boom" })).rejects.toThrow("crash");
    const done = await workflow.invoke(null, { threadId: "t-boom" });

    expect(done.output).toBe("handled");
    expect(runs).toBe(1);
    expect(seen).toEqual([
      "FUNC_003 task 'boom' (call 0) failed: [TOOL_ERROR_001] card declined",
      "FUNC_003 task 'boom' (call 0) failed: [TOOL_ERROR_001] card declined",
    ]);
  });

  it("fails a task whose result is not JSON (FUNC_003), naming where", async () => {
    const big = task("big", () => ({ amount: 10n }));
    const workflow = entrypoint({ name: "bigint" }, () => big());

    const { code, message } = await codeOf(workflow.invoke(undefined, { threadId: "t-big" }));

    expect(code).toBe("FUNC_003");
    expect(message).toMatch(/result\.amount: BigInt is not JSON/);
  });

  it("refuses a task called outside an entrypoint, or inside a task (FUNC_001)", async () => {
    const { addOne } = countedTasks();
    expect(await codeOf(addOne(1))).toMatchObject({
      code: "FUNC_001",
      message: expect.stringContaining("outside a running entrypoint"),
    });

    const outer = task("outer", (n: number) => addOne(n));
    const workflow = entrypoint({ name: "nested" }, async () => {
      return codeOf(outer(1));
    });
    const result = await workflow.invoke(undefined, { threadId: "t-nested" });
    expect(result.output).toMatchObject({
      code: "FUNC_003",
      message: expect.stringContaining("'add_one' was called inside another task"),
    });
  });

  it("refuses bad definitions with FUNC_002, before anything runs", () => {
    const refused = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return isTenxgraphError(error, "FUNC_002") ? error.message : `other: ${String(error)}`;
      }
      return "accepted";
    };
    expect(refused(() => task("has space", () => 1))).toMatch(/name must be 1-64/);
    expect(refused(() => task("ok", "not a function" as never))).toMatch(/must be a function/);
    expect(
      refused(() =>
        task("ok", () => 1, { onInDoubt: "maybe" as unknown as TaskInDoubtPolicy<void> }),
      ),
    ).toMatch(/onInDoubt/);
    expect(refused(() => task("ok", () => 1, { retries: 3 } as never))).toMatch(/retries/);
    expect(refused(() => entrypoint({ name: "" }, () => 1))).toMatch(/options.name/);
    expect(refused(() => entrypoint({ name: "e" }, 42 as never))).toMatch(/must be a function/);
    expect(refused(() => task({ name: "named", timeout: 5 }, () => 1))).toBe("accepted");
  });

  it("refuses a task input that is not JSON (FUNC_002), running nothing", async () => {
    const { runs, addOne } = countedTasks();
    const workflow = entrypoint({ name: "bad_input" }, () => codeOf(addOne(1n as never)));
    const result = await workflow.invoke(undefined, { threadId: "t-bad-input" });
    expect(result.output).toMatchObject({
      code: "FUNC_002",
      message: expect.stringContaining("input: BigInt is not JSON"),
    });
    expect(runs.add_one).toBe(0);
    expect(await workflow.graph.getToolLedger({ threadId: "t-bad-input" })).toEqual([]);
  });

  it("refuses a replay that calls a recorded task with another input (FUNC_004)", async () => {
    let input = 1;
    let failOnce = true;
    const { addOne } = countedTasks();
    const workflow = entrypoint({ name: "drifting" }, async () => {
      const one = await addOne(input);
      if (failOnce) {
        failOnce = false;
        throw new Error("crash");
      }
      return one;
    });
    await expect(workflow.invoke(undefined, { threadId: "t-drift" })).rejects.toThrow("crash");
    input = 2;

    const { code } = await codeOf(workflow.invoke(null, { threadId: "t-drift" }));
    expect(code).toBe("FUNC_004");
  });
});

describe("a task call in doubt (claimed by a run that died, never recorded)", () => {
  /** The workflow's first task call was claimed by a dead run; `policy` decides. */
  async function afterDeadClaim(policy: TaskInDoubtPolicy<number>) {
    const checkpointer = new InMemoryCheckpointer();
    let charges = 0;
    const charge = task(
      "charge",
      (cents: number) => {
        charges += 1;
        return `charged ${cents}`;
      },
      { onInDoubt: policy },
    );
    const workflow = entrypoint(
      { name: "pay", checkpointer, claimStaleAfterMs: 50, stopPollIntervalMs: 20 },
      (cents: number) => charge(cents),
    );
    // The key the first run's first call gets: learned from a thread that ran it.
    await workflow.invoke(1, { threadId: "t-probe" });
    const [probe] = await workflow.graph.getToolLedger({ threadId: "t-probe" });
    await checkpointer.claimCalls("t-doubt", [
      { key: probe!.key, toolName: "charge", ownerRunId: "dead", leaseMs: 50, expectedAttempt: 0 },
    ]);
    await pause(60);
    charges = 0;
    const entry = async () => (await workflow.graph.getToolLedger({ threadId: "t-doubt" }))[0];
    return { workflow, charges: () => charges, entry };
  }

  it('"retry" runs it again, as attempt 2', async () => {
    const { workflow, charges, entry } = await afterDeadClaim("retry");
    const done = await workflow.invoke(42, { threadId: "t-doubt" });
    expect(done.output).toBe("charged 42");
    expect(charges()).toBe(1);
    expect(await entry()).toMatchObject({ status: "completed", attempt: 2 });
  });

  it('"fail" does not run it: the entrypoint gets FUNC_003 quoting TOOL_IN_DOUBT_001', async () => {
    const { workflow, charges } = await afterDeadClaim("fail");
    const { code, message } = await codeOf(workflow.invoke(42, { threadId: "t-doubt" }));
    expect(code).toBe("FUNC_003");
    expect(message).toContain("[TOOL_IN_DOUBT_001]");
    expect(charges()).toBe(0);
  });

  it("reconcile's answer is the task's result, and the task does not run", async () => {
    const { workflow, charges } = await afterDeadClaim({
      reconcile: (cents) => ({ found: cents }),
    });
    const done = await workflow.invoke(42, { threadId: "t-doubt" });
    expect(done.output).toEqual({ found: 42 });
    expect(charges()).toBe(0);
  });

  it('"interrupt" asks a human; { action: "complete", result } is the task\'s result', async () => {
    const { workflow, charges } = await afterDeadClaim("interrupt");
    const paused = await workflow.invoke(42, { threadId: "t-doubt" });
    expect(paused.status).toBe("interrupted");
    const done = await workflow.invoke(
      new Command({ resume: { action: "complete", result: "charged by hand" } }),
      { threadId: "t-doubt" },
    );
    expect(done.output).toBe("charged by hand");
    expect(charges()).toBe(0);
  });
});
