import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Command } from "../definition/command.js";
import { END } from "../definition/edges.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import {
  callsTurn,
  collectEvents,
  ofType,
  recordingLogger,
  supportAgent,
  testMeter,
  toolText,
} from "../support/helpers.js";
import { tool } from "../tools/tool.js";
import { interrupt } from "./interrupt.js";

const user = (text: string) => ({ messages: [Message.user(text)] });

/**
 * `lookup_order` finishes at once; `refund` and `send_credit` each ask a human in interrupt().
 * `log` records code before and after each interrupt() and every lookup.
 */
function approvalAgent(threadLog: string[]) {
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Look up an order.",
    schema: z.object({ order_id: z.string() }),
    execute: (args) => {
      threadLog.push(`lookup ${args.order_id}`);
      return "order 4821: 42 USD";
    },
  });
  const approval = (name: string) =>
    tool({
      name,
      description: `${name}, after a human approves.`,
      schema: z.object({ amount: z.number() }),
      execute: (args) => {
        threadLog.push(`${name} before`);
        const answer = interrupt<{ approved: boolean }>(
          { tool: name, amount: args.amount },
          { message: `Approve ${name} of ${args.amount}?` },
        );
        threadLog.push(`${name} after ${answer.approved}`);
        return answer.approved ? `${name} done` : `${name} declined`;
      },
    });
  const metrics = testMeter();
  const app = supportAgent({
    model: [
      callsTurn("m-1", [
        ["lookup_order", { order_id: "4821" }, "call_a"],
        ["refund", { amount: 42 }, "call_b"],
        ["send_credit", { amount: 5 }, "call_c"],
      ]),
      "All settled.",
    ],
    tools: [lookupOrder, approval("refund"), approval("send_credit")],
    checkpointer: new InMemoryCheckpointer(),
    meter: metrics.meter,
  });
  return { app, metrics };
}

describe("interrupt() in parallel tool calls", () => {
  it("reports both paused calls together, answers them one at a time, and never repeats finished work", async () => {
    const log: string[] = [];
    const { app, metrics } = approvalAgent(log);
    const threadId = "t-two-pauses";

    const first = await app.invoke(user("refund and credit"), { threadId });

    expect(first.status).toBe("interrupted");
    expect(first.interrupts).toEqual([
      {
        id: "m-1:call_b",
        value: { tool: "refund", amount: 42 },
        message: "Approve refund of 42?",
        node: "TOOL",
        toolCallId: "call_b",
      },
      {
        id: "m-1:call_c",
        value: { tool: "send_credit", amount: 5 },
        message: "Approve send_credit of 5?",
        node: "TOOL",
        toolCallId: "call_c",
      },
    ]);
    expect([...log].sort()).toEqual(["lookup 4821", "refund before", "send_credit before"]);
    const paused = await app.getToolLedger({ threadId });
    expect(paused.map((e) => [e.key, e.status])).toEqual([
      ["m-1:call_a", "completed"],
      ["m-1:call_b", "interrupted"],
      ["m-1:call_c", "interrupted"],
    ]);

    const second = await app.invoke(
      { resume: { approved: true }, interruptId: "m-1:call_b" },
      { threadId },
    );

    // The unanswered call paused again, under the same id; the sibling came from the ledger.
    expect(second.status).toBe("interrupted");
    expect(second.interrupts.map((i) => i.id)).toEqual(["m-1:call_c"]);
    expect(log.filter((l) => l.startsWith("lookup"))).toEqual(["lookup 4821"]);
    expect(log.filter((l) => l === "refund after true")).toHaveLength(1);
    expect(await metrics.sum("tenxgraph.tool.ledger_hits", { tool: "lookup_order" })).toBe(1);

    const third = await app.invoke(
      { resume: { approved: false }, interruptId: "m-1:call_c" },
      { threadId },
    );

    expect(third.status).toBe("completed");
    expect(toolText(third.state, "call_a")).toBe("order 4821: 42 USD");
    expect(toolText(third.state, "call_b")).toBe("refund done");
    expect(toolText(third.state, "call_c")).toBe("send_credit declined");
    expect(Message.text(third.state.messages.at(-1)!)).toBe("All settled.");
    // Code before interrupt() ran on every pass; code after it exactly once.
    const count = (line: string) => log.filter((l) => l === line).length;
    expect(count("lookup 4821")).toBe(1);
    expect(count("refund before")).toBe(2);
    expect(count("refund after true")).toBe(1);
    expect(count("send_credit before")).toBe(3);
    expect(count("send_credit after false")).toBe(1);
    expect(await metrics.sum("tenxgraph.tool.in_doubt")).toBe(0);
    const done = await app.getToolLedger({ threadId });
    expect(done.map((e) => [e.key, e.status, e.attempt])).toEqual([
      ["m-1:call_a", "completed", 1],
      ["m-1:call_b", "completed", 2],
      ["m-1:call_c", "completed", 3],
    ]);
  });

  it("answers both paused calls at once with a map of interrupt ids, as LangGraph.js's Command({ resume }) does", async () => {
    const log: string[] = [];
    const { app } = approvalAgent(log);
    const threadId = "t-answer-map";
    await app.invoke(user("refund and credit"), { threadId });

    const done = await app.invoke(
      new Command({
        resume: { "m-1:call_b": { approved: true }, "m-1:call_c": { approved: false } },
      }),
      { threadId },
    );

    expect(done.status).toBe("completed");
    expect(toolText(done.state, "call_b")).toBe("refund done");
    expect(toolText(done.state, "call_c")).toBe("send_credit declined");
    expect(log.filter((l) => l.includes("after"))).toEqual([
      "refund after true",
      "send_credit after false",
    ]);
  });

  it("refuses a map of answers that names an interrupt not pending (RESUME_002), and stores none of it", async () => {
    const log: string[] = [];
    const { app } = approvalAgent(log);
    const threadId = "t-answer-map-unknown";
    await app.invoke(user("go"), { threadId });
    const before = await app.getState({ threadId });

    const wrong = app.invoke(
      { resume: { "m-1:call_b": { approved: true }, "m-1:call_z": { approved: true } } },
      { threadId },
    );

    await expect(wrong).rejects.toMatchObject({ code: "RESUME_002" });
    await expect(wrong).rejects.toThrow("No pending interrupt 'm-1:call_z'");
    expect(await app.getState({ threadId })).toEqual(before);
  });

  it("refuses an ambiguous or unknown resume with a clear code and leaves the thread waiting", async () => {
    const log: string[] = [];
    const { app } = approvalAgent(log);
    const threadId = "t-ambiguous";
    await app.invoke(user("go"), { threadId });
    const before = await app.getState({ threadId });

    const ambiguous = app.invoke({ resume: { approved: true } }, { threadId });
    await expect(ambiguous).rejects.toMatchObject({ code: "RESUME_001" });
    await expect(ambiguous).rejects.toThrow(
      "has 2 pending interrupts: name the one you answer with interruptId (one of: m-1:call_b, m-1:call_c)",
    );
    await expect(
      app.invoke({ resume: true, interruptId: "m-1:call_z" }, { threadId }),
    ).rejects.toMatchObject({ code: "RESUME_002" });
    await expect(app.invoke(user("new question"), { threadId })).rejects.toMatchObject({
      code: "THREAD_002",
    });
    await expect(app.invoke(null, { threadId })).rejects.toMatchObject({ code: "THREAD_002" });

    expect(await app.getState({ threadId })).toEqual(before);
    expect(before?.status).toBe("interrupted");
    expect(log.filter((l) => l.endsWith("before"))).toHaveLength(2);
  });

  it("refuses a resume on a thread that is not waiting (RESUME_003)", async () => {
    const app = supportAgent({ model: ["hello"], tools: [] });
    await expect(app.invoke({ resume: 1 }, { threadId: "t-none" })).rejects.toMatchObject({
      code: "RESUME_003",
    });
    await app.invoke(user("hi"), { threadId: "t-done" });
    await expect(app.invoke({ resume: 1 }, { threadId: "t-done" })).rejects.toMatchObject({
      code: "RESUME_003",
    });
  });

  it("streams the same pauses and resumes, with replayed flags on the finished sibling", async () => {
    const log: string[] = [];
    const { app } = approvalAgent(log);
    const threadId = "t-stream";

    const { events: firstEvents } = await collectEvents(app.stream(user("go"), { threadId }));
    expect(ofType(firstEvents, "interrupt")[0]?.interrupts.map((i) => i.id)).toEqual([
      "m-1:call_b",
      "m-1:call_c",
    ]);
    expect(ofType(firstEvents, "tool_result").map((e) => [e.toolCallId, e.replayed])).toEqual([
      ["call_a", false],
    ]);
    expect(ofType(firstEvents, "run_end")[0]?.status).toBe("interrupted");
    expect(ofType(firstEvents, "state").at(-1)?.status).toBe("interrupted");

    await app.invoke({ resume: { approved: true }, interruptId: "m-1:call_b" }, { threadId });
    const { events: lastEvents } = await collectEvents(
      app.stream({ resume: { approved: true }, interruptId: "m-1:call_c" }, { threadId }),
    );

    expect(ofType(lastEvents, "run_start")[0]?.mode).toBe("resume");
    expect(ofType(lastEvents, "tool_start").map((e) => e.toolCallId)).toEqual([
      "call_a",
      "call_b",
      "call_c",
    ]);
    expect(
      ofType(lastEvents, "tool_result").map((e) => [e.toolCallId, e.replayed, e.isError]),
    ).toEqual([
      ["call_a", true, false],
      ["call_b", true, false],
      ["call_c", false, false],
    ]);
    expect(ofType(lastEvents, "run_end")[0]?.status).toBe("completed");
    expect(log.filter((l) => l.includes("after"))).toEqual([
      "refund after true",
      "send_credit after true",
    ]);
  });
});

describe("interrupt() in a tool whose call fell in doubt", () => {
  it("keeps the tool's interrupt id after an in-doubt question was asked and answered in between", async () => {
    const effects: string[] = [];
    const refund = tool({
      name: "refund",
      description: "Refund, after a human approves.",
      schema: z.object({}),
      onInDoubt: "interrupt",
      execute: () => {
        const answer = interrupt<{ approved: boolean }>("approve?");
        if (!answer.approved) return "declined";
        effects.push("refund");
        return "refunded";
      },
    });
    const crash = new FaultPoints().arm(
      "tool.after_return",
      () => {
        throw new Error("killed before the record");
      },
      { times: 1 },
    );
    const app = supportAgent({
      model: [callsTurn("m-1", [["refund", {}]]), "Done."],
      tools: [refund],
      faultPoints: crash,
    });
    const threadId = "t-ids";

    const asked = await app.invoke(user("refund"), { threadId });
    expect(asked.interrupts.map((i) => i.id)).toEqual(["m-1:call_1"]);
    await expect(app.invoke({ resume: { approved: true } }, { threadId })).rejects.toThrow(
      "killed before the record",
    );
    const inDoubt = await app.invoke(null, { threadId });
    // The approval paused attempt 1; attempt 2 ran and fell in doubt.
    expect(inDoubt.interrupts.map((i) => i.id)).toEqual(["m-1:call_1:in-doubt-2"]);

    // On retry, interrupt("approve?") finds its earlier answer under the same id.
    const result = await app.invoke({ resume: { action: "retry" } }, { threadId });
    expect(result.status).toBe("completed");
    expect(result.interrupts).toEqual([]);
    expect(toolText(result.state, "call_1")).toBe("refunded");
    expect(effects).toEqual(["refund", "refund"]);
  });
});

describe("an in-doubt question answered once", () => {
  it("is asked again when the retried attempt falls in doubt too: an answer about attempt 1 never decides attempt 2", async () => {
    const effects: string[] = [];
    const charge = tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: z.object({}),
      onInDoubt: "interrupt",
      execute: (_args, ctx) => {
        effects.push(`charge attempt ${ctx.attempt}`);
        return "charged";
      },
    });
    // Each of the first two attempts is "killed" after charging, before its record.
    const crash = new FaultPoints().arm(
      "tool.after_return",
      () => {
        throw new Error("killed before the record");
      },
      { times: 2 },
    );
    const app = supportAgent({
      model: [callsTurn("m-1", [["charge_card", {}]]), "Done."],
      tools: [charge],
      faultPoints: crash,
    });
    const threadId = "t-asked-again";
    await expect(app.invoke(user("charge"), { threadId })).rejects.toThrow("killed");
    const first = await app.invoke(null, { threadId });
    expect(first.interrupts.map((i) => i.id)).toEqual(["m-1:call_1:in-doubt-1"]);
    await expect(app.invoke({ resume: { action: "retry" } }, { threadId })).rejects.toThrow(
      "killed",
    );
    expect(effects).toEqual(["charge attempt 1", "charge attempt 2"]);

    // Attempt 2 is in doubt now: a human is asked about it, not answered by the old "retry".
    const second = await app.invoke(null, { threadId });
    expect(second.status).toBe("interrupted");
    expect(second.interrupts.map((i) => i.id)).toEqual(["m-1:call_1:in-doubt-2"]);
    expect(effects).toEqual(["charge attempt 1", "charge attempt 2"]);
    const done = await app.invoke(
      { resume: { action: "complete", result: "charged" } },
      { threadId },
    );
    expect(done.status).toBe("completed");
    expect(effects).toHaveLength(2);
  });
});

describe("interrupt() in a node", () => {
  type S = { messages: Message[]; decisions: unknown[] };

  function askingGraph(runs: string[]) {
    return new StateGraph<S>({ initialState: { decisions: [] } })
      .addNode("ASK", (state) => {
        runs.push("ask before");
        const first = interrupt("ship it?", { message: "Ship?" });
        runs.push("between");
        const second = interrupt("and notify?");
        const named = interrupt({ q: "priority" }, { id: "priority" });
        runs.push("ask after");
        return { decisions: [...state.decisions, first, second, named] };
      })
      .addEdge("ASK", END)
      .setEntryPoint("ASK")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
  }

  it("names interrupts by node, step and position (or the given id) and returns the answers on resume", async () => {
    const runs: string[] = [];
    const app = askingGraph(runs);
    const threadId = "t-node";

    const first = await app.invoke(user("go"), { threadId });
    expect(first.interrupts).toEqual([
      { id: "ASK:0", value: "ship it?", message: "Ship?", node: "ASK" },
    ]);

    const second = await app.invoke({ resume: "yes" }, { threadId });
    expect(second.interrupts).toEqual([{ id: "ASK:0:1", value: "and notify?", node: "ASK" }]);

    const third = await app.invoke({ resume: "no" }, { threadId });
    expect(third.interrupts).toEqual([
      { id: "ASK:0:priority", value: { q: "priority" }, node: "ASK" },
    ]);

    const done = await app.invoke({ resume: "high", interruptId: "ASK:0:priority" }, { threadId });
    expect(done.status).toBe("completed");
    expect(done.state.decisions).toEqual(["yes", "no", "high"]);
    expect(runs).toEqual([
      "ask before",
      "ask before",
      "between",
      "ask before",
      "between",
      "ask before",
      "between",
      "ask after",
    ]);
    expect((await app.getState({ threadId }))?.interrupts).toEqual([]);
  });

  it("numbers unnamed interrupts without counting named ones", async () => {
    const app = new StateGraph<S>({ initialState: { decisions: [] } })
      .addNode("ASK", (state) => {
        const named = interrupt("priority?", { id: "priority" });
        const unnamed = interrupt("ship it?");
        return { decisions: [...state.decisions, named, unnamed] };
      })
      .addEdge("ASK", END)
      .setEntryPoint("ASK")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });
    const threadId = "t-named-first";

    await app.invoke(user("go"), { threadId });
    const second = await app.invoke({ resume: "high" }, { threadId });
    expect(second.interrupts.map((i) => i.id)).toEqual(["ASK:0"]);
    const done = await app.invoke({ resume: "yes" }, { threadId });
    expect(done.state.decisions).toEqual(["high", "yes"]);
  });

  it("throws when called outside a running node or tool", () => {
    expect(() => interrupt("hello")).toThrow(
      "interrupt() was called outside a running node or tool",
    );
  });
});
