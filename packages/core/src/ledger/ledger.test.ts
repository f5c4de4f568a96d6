import { describe, expect, it } from "vitest";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import {
  callsTurn,
  collectEvents,
  freezeAt,
  ofType,
  pause,
  recordingLogger,
  supportAgent,
  testMeter,
  toolMessages,
  toolText,
  withoutHeartbeats,
  withoutStepWrites,
} from "../support/helpers.js";
import type { ToolContext } from "../tools/tool-context.js";
import { isCharge, supportTools, threeCalls, user, type S } from "../support/ledger-tools.js";

describe("ledger keys", () => {
  it("keys a call by its message: the seed's call_1 reused on a later turn runs the refund", async () => {
    const effects: string[] = [];
    const app = supportAgent({
      model: [
        { toolCalls: [{ name: "charge_card", args: { order_id: "4821" } }] },
        "Charged.",
        { toolCalls: [{ name: "refund_payment", args: { order_id: "4821" } }] },
        "Refunded.",
      ],
      tools: supportTools(effects),
    });

    await app.invoke(user("charge order 4821"), { threadId: "t-reuse" });
    const result = await app.invoke(user("refund it please"), { threadId: "t-reuse" });

    expect(effects).toEqual(["charge 4821", "refund 4821"]);
    const [turn1, turn2] = result.state.messages.filter(
      (m) => m.role === "assistant" && m.toolCalls,
    );
    expect(turn1!.role === "assistant" && turn1!.toolCalls?.[0]?.id).toBe("call_1");
    expect(turn2!.role === "assistant" && turn2!.toolCalls?.[0]?.id).toBe("call_1");
    expect(toolMessages(result.state).map((m) => Message.text(m))).toEqual([
      "Charged order 4821",
      "Refunded order 4821",
    ]);
    const ledger = await app.getToolLedger({ threadId: "t-reuse" });
    expect(ledger.map((e) => [e.key, e.toolName, e.status, e.attempt])).toEqual([
      [`${turn1!.id}:call_1`, "charge_card", "completed", 1],
      [`${turn2!.id}:call_1`, "refund_payment", "completed", 1],
    ]);
  });
});

describe("replay after a crash", () => {
  it("continues a run failed by a fault after the record: invoke(null) elsewhere replays every call", async () => {
    // Ledger v1: each result recorded on its own (in v2 calls that return together ride in the step write).
    const checkpointer = withoutStepWrites(new InMemoryCheckpointer());
    const effects: string[] = [];
    const faults = new FaultPoints().arm(
      "ledger.after_record",
      () => {
        throw new Error("crashed after the record");
      },
      { when: isCharge, times: 1 },
    );
    const first = supportAgent<S>({
      model: [threeCalls, "All done."],
      tools: supportTools(effects),
      checkpointer,
      faultPoints: faults,
    });
    await expect(first.invoke(user("charge"), { threadId: "t-fault" })).rejects.toThrow(
      "crashed after the record",
    );
    const failed = await first.getState({ threadId: "t-fault" });
    expect([failed?.status, failed?.currentNode]).toEqual(["failed", "TOOL"]);
    expect((await first.getToolLedger({ threadId: "t-fault" })).map((e) => e.status)).toEqual([
      "completed",
      "completed",
      "completed",
    ]);

    const metrics = testMeter();
    const second = supportAgent<S>({
      model: [threeCalls, "All done."],
      tools: supportTools(effects),
      checkpointer,
      meter: metrics.meter,
    });
    const result = await second.invoke(null, { threadId: "t-fault" });

    expect(result.status).toBe("completed");
    expect([...effects].sort()).toEqual(["charge 4821", "lookup 4821", "receipt 4821"]);
    expect(result.state.charged).toBe(true);
    expect(await metrics.sum("tenxgraph.tool.ledger_hits")).toBe(3);
    expect(await metrics.sum("tenxgraph.tool.in_doubt")).toBe(0);
  });

  it("replays calls recorded before the crash: each side effect once, events say replayed, state changes re-applied", async () => {
    // Ledger v1: every result recorded as its tool returns (v2's riding result: step-writes.test.ts).
    const checkpointer = withoutStepWrites(new InMemoryCheckpointer());
    const effects: string[] = [];
    const crash = freezeAt("ledger.after_record", isCharge);
    const first = supportAgent<S>({
      model: [threeCalls, "All done."],
      tools: supportTools(effects),
      checkpointer,
      faultPoints: crash.faultPoints,
    });
    const zombie = first.invoke(user("charge 4821"), { threadId: "t-crash" });
    await crash.reached;
    await pause(20); // lets the siblings record too
    expect([...effects].sort()).toEqual(["charge 4821", "lookup 4821", "receipt 4821"]);

    const metrics = testMeter();
    const second = supportAgent<S>({
      model: [threeCalls, "All done."],
      tools: supportTools(effects),
      checkpointer,
      meter: metrics.meter,
      claimStaleAfterMs: 50,
    });
    const { events } = await collectEvents(second.stream(null, { threadId: "t-crash" }));

    expect([...effects].sort()).toEqual(["charge 4821", "lookup 4821", "receipt 4821"]);
    const results = ofType(events, "tool_result");
    expect(results.map((e) => [e.toolCallId, e.replayed, e.isError])).toEqual([
      ["call_1", true, false],
      ["call_2", true, false],
      ["call_3", true, false],
    ]);
    expect(ofType(events, "tool_start")).toHaveLength(3);
    expect(ofType(events, "run_start")[0]?.mode).toBe("continue");
    expect(ofType(events, "run_end")[0]?.status).toBe("completed");
    expect(await metrics.sum("tenxgraph.tool.ledger_hits")).toBe(3);
    expect(await metrics.sum("tenxgraph.tool.ledger_hits", { tool: "charge_card" })).toBe(1);

    const state = await second.getState({ threadId: "t-crash" });
    expect(state?.values.charged).toBe(true);
    expect(toolText(state!.values, "call_2")).toBe("Charged order 4821");
    expect(toolMessages(state!.values)).toHaveLength(3);

    // The frozen process wakes up and fails: it neither re-runs nor overwrites anything.
    const ledger = await second.getToolLedger({ threadId: "t-crash" });
    crash.release(new Error("killed"));
    await expect(zombie).rejects.toThrow("killed");
    expect(effects).toHaveLength(3);
    expect(await second.getState({ threadId: "t-crash" })).toEqual(state);
    expect(await second.getToolLedger({ threadId: "t-crash" })).toEqual(ledger);
  });

  it("retries (default policy) a call that returned but was never recorded, with the same key and attempt 2", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const effects: string[] = [];
    const contexts: ToolContext[] = [];
    const crash = freezeAt("tool.after_return", isCharge);
    // The first process dies at the fault point: its claims are not renewed past their lease.
    const first = supportAgent<S>({
      model: [threeCalls, "All done."],
      tools: supportTools(effects, contexts),
      checkpointer: withoutHeartbeats(checkpointer),
      faultPoints: crash.faultPoints,
      claimStaleAfterMs: 50,
    });
    const zombie = first.invoke(user("charge 4821"), { threadId: "t-window" });
    await crash.reached;

    const metrics = testMeter();
    const logger = recordingLogger();
    const second = supportAgent<S>({
      model: [threeCalls, "All done."],
      tools: supportTools(effects, contexts),
      checkpointer,
      meter: metrics.meter,
      logger,
      claimStaleAfterMs: 50,
    });
    const result = await second.invoke(null, { threadId: "t-window" });

    expect(result.status).toBe("completed");
    // The window the ledger cannot close: the charge ran twice, with one idempotency key.
    expect(effects.filter((e) => e.startsWith("charge"))).toEqual(["charge 4821", "charge 4821"]);
    expect(effects.filter((e) => !e.startsWith("charge")).sort()).toEqual([
      "lookup 4821",
      "receipt 4821",
    ]);
    expect(contexts.map((c) => [c.idempotencyKey, c.attempt])).toEqual([
      ["m-1:call_2", 1],
      ["m-1:call_2", 2],
    ]);
    expect(await metrics.sum("tenxgraph.tool.in_doubt", { tool: "charge_card" })).toBe(1);
    expect(logger.find("warn", "IN DOUBT")[0]?.fields).toMatchObject({
      key: "m-1:call_2",
      attempt: 1,
      policy: "retry",
    });
    const entry = (await second.getToolLedger({ threadId: "t-window" })).find(
      (e) => e.key === "m-1:call_2",
    );
    expect(entry).toMatchObject({ status: "completed", attempt: 2, ownerRunId: result.runId });

    const ledger = await second.getToolLedger({ threadId: "t-window" });
    crash.release(new Error("killed"));
    await expect(zombie).rejects.toThrow("killed");
    expect(await second.getToolLedger({ threadId: "t-window" })).toEqual(ledger);
    expect((await second.getState({ threadId: "t-window" }))?.status).toBe("completed");
  });
});

/** The ledger is unavailable: its first claim and every read fail (a node claims first, and
 * reads only when that claim failed). */
class FailingReads extends InMemoryCheckpointer {
  #claims = 0;
  override async getCalls(): Promise<never> {
    throw new Error("ledger table unavailable");
  }
  override async claimCalls(...args: Parameters<InMemoryCheckpointer["claimCalls"]>) {
    if (this.#claims++ === 0) throw new Error("ledger table unavailable");
    return super.claimCalls(...args);
  }
}
class FailingRecords extends InMemoryCheckpointer {
  override async completeCall(): Promise<never> {
    throw new Error("disk full");
  }
}
class FailingClaims extends InMemoryCheckpointer {
  override async claimCalls(): Promise<never> {
    throw new Error("connection reset");
  }
}

describe("failures of the ledger itself", () => {
  it("logs a read failure, treats it as no record and runs the tool", async () => {
    const effects: string[] = [];
    const logger = recordingLogger();
    const app = supportAgent({
      model: [callsTurn("m-1", [["lookup_order", { order_id: "4821" }]]), "ok"],
      tools: supportTools(effects),
      // Ledger v1: the node claims its calls (v2 writes retry claims with the model's step).
      checkpointer: withoutStepWrites(new FailingReads()),
      logger,
    });

    const result = await app.invoke(user("look"), { threadId: "t-read" });

    expect(result.status).toBe("completed");
    expect(effects).toEqual(["lookup 4821"]);
    expect(toolText(result.state, "call_1")).toBe("order 4821: 42 USD");
    const [logged] = logger.find("error", "Tool ledger read failed");
    expect(logged?.message).toBe(
      "Tool ledger read failed: treated as no record, the tools run (at least once)",
    );
    expect(logged?.fields).toMatchObject({ threadId: "t-read", keys: ["m-1:call_1"] });
    expect((logged?.fields.err as Error).message).toBe("ledger table unavailable");
    expect((await app.getToolLedger({ threadId: "t-read" }))[0]?.status).toBe("completed");
  });

  it("logs a failed record at error level, counts it, gives the model the result and completes the run", async () => {
    const effects: string[] = [];
    const logger = recordingLogger();
    const metrics = testMeter();
    const app = supportAgent<S>({
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "Charged, thanks."],
      tools: supportTools(effects),
      // Ledger v1: the result is recorded on its own (v2 records it with the step write).
      checkpointer: withoutStepWrites(new FailingRecords()),
      logger,
      meter: metrics.meter,
    });

    const result = await app.invoke(user("charge"), { threadId: "t-write" });

    expect(result.status).toBe("completed");
    expect(effects).toEqual(["charge 4821"]);
    expect(toolText(result.state, "call_1")).toBe("Charged order 4821");
    expect(Message.text(result.state.messages.at(-1)!)).toBe("Charged, thanks.");
    const failures = logger.find("error", "could not be recorded");
    expect(failures).toHaveLength(1);
    expect(failures[0]!.message).toBe(
      "Tool call COMPLETED but could not be recorded; a replay of this node may execute it again",
    );
    expect(failures[0]!.fields).toMatchObject({
      threadId: "t-write",
      key: "m-1:call_1",
      tool: "charge_card",
      toolCallId: "call_1",
      runId: result.runId,
    });
    expect(await metrics.sum("tenxgraph.tool.ledger_record_failures")).toBe(1);
    expect(
      await metrics.sum("tenxgraph.tool.ledger_record_failures", { tool: "charge_card" }),
    ).toBe(1);
    const [entry] = await app.getToolLedger({ threadId: "t-write" });
    expect(entry?.status).toBe("started");
  });

  it("runs the tools without ledger protection when the claim itself fails", async () => {
    const effects: string[] = [];
    const contexts: ToolContext[] = [];
    const logger = recordingLogger();
    const app = supportAgent<S>({
      model: [callsTurn("m-1", [["charge_card", { order_id: "1" }]]), "ok"],
      tools: supportTools(effects, contexts),
      checkpointer: withoutStepWrites(new FailingClaims()),
      logger,
    });
    const result = await app.invoke(user("go"), { threadId: "t-claim" });

    expect(result.status).toBe("completed");
    expect(effects).toEqual(["charge 1"]);
    expect(contexts[0]?.attempt).toBe(0);
    expect(contexts[0]?.idempotencyKey).toBe("m-1:call_1");
    expect(logger.find("error", "Tool ledger claim failed")[0]?.fields.keys).toEqual([
      "m-1:call_1",
    ]);
  });
});
