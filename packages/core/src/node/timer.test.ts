import { describe, expect, it } from "vitest";
import { END } from "../definition/edges.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { interrupt } from "./interrupt.js";

type State = { messages: Message[]; log: string[] };

const reducers = { log: (current: string[] = [], update: string[]) => [...current, ...update] };

/** `wait` sleeps `ms` (or interrupts with `resumeAt`), then `after` records that it ran. */
function sleeper(pause: (ctx: { sleep(ms: number): Promise<void> }) => Promise<unknown>) {
  return new StateGraph<State>({ reducers })
    .addNode("wait", async (_state, ctx) => {
      const answer = await pause(ctx);
      return { log: [`woke with ${JSON.stringify(answer ?? null)}`] };
    })
    .addEdge("wait", END)
    .setEntryPoint("wait")
    .compile({ checkpointer: new InMemoryCheckpointer() });
}

describe("durable timers in the core", () => {
  it("ctx.sleep pauses with a resumeAt, stored in the checkpoint; resuming with null wakes it", async () => {
    const app = sleeper((ctx) => ctx.sleep(60_000));
    const before = Date.now();
    const paused = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });
    expect(paused.status).toBe("interrupted");
    const [timer] = paused.interrupts;
    expect(timer!.value).toEqual({ sleep_ms: 60_000 });
    const wake = Date.parse(timer!.resumeAt!);
    expect(wake).toBeGreaterThanOrEqual(before + 60_000);
    expect(wake).toBeLessThan(Date.now() + 60_000 + 1);
    const stored = await app.checkpointer.getCheckpoint("t");
    expect(stored!.interrupts[0]!.resumeAt).toBe(timer!.resumeAt);

    const done = await app.invoke({ resume: null, interruptId: timer!.id }, { threadId: "t" });
    expect(done.status).toBe("completed");
    expect(done.state.log).toEqual(["woke with null"]);
  });

  it("interrupt(value, { resumeAt }) stores the time as ISO; an early answer is returned", async () => {
    const app = sleeper(async () =>
      interrupt("approve?", { resumeAt: "2031-01-02T03:04:05+01:00" }),
    );
    const paused = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });
    expect(paused.interrupts[0]!.resumeAt).toBe("2031-01-02T02:04:05.000Z");
    const done = await app.invoke({ resume: "yes" }, { threadId: "t" });
    expect(done.state.log).toEqual(['woke with "yes"']);
  });

  it.each([
    ["a negative duration", -1],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["a string", "10" as unknown as number],
  ])("ctx.sleep refuses %s with TIMER_001 and pauses nothing", async (_name, ms) => {
    const app = sleeper((ctx) => ctx.sleep(ms));
    const error = await app
      .invoke({ messages: [Message.user("go")] }, { threadId: "t" })
      .catch((e: unknown) => e);
    expect(isTenxgraphError(error, "TIMER_001")).toBe(true);
    expect((await app.checkpointer.getCheckpoint("t"))?.interrupts ?? []).toEqual([]);
  });

  it.each([
    ["not a date", "tomorrow-ish"],
    ["an invalid Date", new Date(Number.NaN)],
    ["a number", 5 as unknown as string],
  ])("interrupt refuses a resumeAt that is %s with TIMER_002", async (_name, resumeAt) => {
    const app = sleeper(async () => interrupt("x", { resumeAt }));
    const error = await app
      .invoke({ messages: [Message.user("go")] }, { threadId: "t" })
      .catch((e: unknown) => e);
    expect(isTenxgraphError(error, "TIMER_002")).toBe(true);
  });
});
