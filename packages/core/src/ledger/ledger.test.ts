import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import {
  callsTurn,
  collectEvents,
  deferred,
  freezeAt,
  LedgerReadsCheckpointer,
  ofType,
  pause,
  recordingLogger,
  supportAgent,
  testMeter,
  toolMessages,
  toolText,
  untilAborted,
} from "../testing/test-support.js";
import type { ToolContext } from "../tools/tool-context.js";
import { tool } from "../tools/tool.js";
import { messageEnvelope } from "./envelope.js";
import type { AttemptRef, CompletedLedgerEntry } from "./ledger-entry.js";

type S = { messages: Message[]; charged?: boolean };

/** The seed's support tools; every side effect lands in `effects`, every context in `contexts`. */
function supportTools(effects: string[], contexts: ToolContext[] = []) {
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Look up an order.",
    schema: z.object({ order_id: z.string() }),
    execute: (args) => {
      effects.push(`lookup ${args.order_id}`);
      return "order 4821: 42 USD";
    },
  });
  const chargeCard = tool<z.ZodObject<{ order_id: z.ZodString }>, S>({
    name: "charge_card",
    description: "Charge the card.",
    schema: z.object({ order_id: z.string() }),
    execute: (args, ctx) => {
      contexts.push(ctx);
      effects.push(`charge ${args.order_id}`);
      ctx.state.charged = true;
      return `Charged order ${args.order_id}`;
    },
  });
  const sendReceipt = tool({
    name: "send_receipt",
    description: "Email the receipt.",
    schema: z.object({ order_id: z.string() }),
    execute: (args) => {
      effects.push(`receipt ${args.order_id}`);
      return "Receipt sent";
    },
  });
  const refundPayment = tool({
    name: "refund_payment",
    description: "Refund the order.",
    schema: z.object({ order_id: z.string() }),
    execute: (args) => {
      effects.push(`refund ${args.order_id}`);
      return `Refunded order ${args.order_id}`;
    },
  });
  return [lookupOrder, chargeCard, sendReceipt, refundPayment];
}

const threeCalls = callsTurn("m-1", [
  ["lookup_order", { order_id: "4821" }],
  ["charge_card", { order_id: "4821" }],
  ["send_receipt", { order_id: "4821" }],
]);
const user = (text: string) => ({ messages: [Message.user(text)] });
const isCharge = (at: { toolName?: string }) => at.toolName === "charge_card";

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
    const checkpointer = new InMemoryCheckpointer();
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
    const checkpointer = new InMemoryCheckpointer();
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
    const first = supportAgent<S>({
      model: [threeCalls, "All done."],
      tools: supportTools(effects, contexts),
      checkpointer,
      faultPoints: crash.faultPoints,
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

class FailingReads extends InMemoryCheckpointer {
  override async getCalls(): Promise<never> {
    throw new Error("ledger table unavailable");
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
      checkpointer: new FailingReads(),
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
      checkpointer: new FailingRecords(),
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
      checkpointer: new FailingClaims(),
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

/** Records what every fenced completion returned. */
class RecordingCheckpointer extends InMemoryCheckpointer {
  readonly completions: { attempt: number; recorded: boolean }[] = [];
  override async completeCall(threadId: string, ref: AttemptRef, result: unknown) {
    const recorded = await super.completeCall(threadId, ref, result);
    this.completions.push({ attempt: ref.attempt, recorded });
    return recorded;
  }
}

/** A claim on `m-1:call_1` held by another execution that keeps heartbeating it. */
async function liveClaim(checkpointer: InMemoryCheckpointer, threadId: string, ownerRunId: string) {
  const held = { key: "m-1:call_1", attempt: 1 };
  await checkpointer.claimCalls(threadId, [
    { key: held.key, toolName: "charge_card", ownerRunId, expectedAttempt: 0 },
  ]);
  const heartbeat = setInterval(() => void checkpointer.heartbeatCalls(threadId, [held]), 10);
  return { held, heartbeat };
}

/** The store counting ledger reads, whose first `completeCall` can be held at a gate. */
class ObservedLedger extends LedgerReadsCheckpointer {
  readonly recording = deferred();
  readonly releaseRecord = deferred();
  holdFirstRecord = false;

  override async completeCall(threadId: string, ref: AttemptRef, result: unknown) {
    if (this.holdFirstRecord) {
      this.holdFirstRecord = false;
      this.recording.resolve();
      await this.releaseRecord.promise;
    }
    return super.completeCall(threadId, ref, result);
  }
}

/** A charge tool: every execution lands in `effects`; `second` resolves on the second one. */
function countedCharge(options: { gate?: Promise<void> } = {}) {
  const effects: string[] = [];
  const entered = deferred();
  const second = deferred();
  const charge = tool({
    name: "charge_card",
    description: "Charge the card.",
    schema: z.object({ order_id: z.string() }),
    execute: async (args, ctx) => {
      effects.push(`charge ${args.order_id} attempt ${ctx.attempt}`);
      if (effects.length === 2) second.resolve();
      if (effects.length === 1) {
        entered.resolve();
        await options.gate;
      }
      return `Charged order ${args.order_id}`;
    },
  });
  return { charge, effects, entered, second };
}

describe("concurrent executions", () => {
  it("waits for a live claim's result instead of running the call a second time", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const { held, heartbeat } = await liveClaim(checkpointer, "t-live", "live-run");
    const effects: string[] = [];
    const logger = recordingLogger();
    const app = supportAgent<S>({
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "ok"],
      tools: supportTools(effects),
      checkpointer,
      logger,
      claimStaleAfterMs: 200,
    });
    try {
      const run = collectEvents(app.stream(user("charge"), { threadId: "t-live" }));
      await pause(400); // well past claimStaleAfterMs: only the heartbeat keeps the claim live
      expect(effects).toEqual([]);
      const winner = Message.tool("call_1", "Charged by the other execution");
      expect(await checkpointer.completeCall("t-live", held, messageEnvelope(winner, {}))).toBe(
        true,
      );
      const { events } = await run;

      expect(effects).toEqual([]);
      const [result] = ofType(events, "tool_result");
      expect(result).toMatchObject({ replayed: true, key: held.key });
      expect(Message.text(result!.message)).toBe("Charged by the other execution");
      expect(logger.find("info", "held by another execution")[0]?.fields.ownerRunId).toBe(
        "live-run",
      );
    } finally {
      clearInterval(heartbeat);
    }
  });

  it("gives up with TOOL_CONFLICT_001 when the live holder runs past the tool's deadline", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const { heartbeat } = await liveClaim(checkpointer, "t-stuck", "stuck-run");
    const effects: string[] = [];
    const app = supportAgent<S>({
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "ok"],
      tools: supportTools(effects),
      checkpointer,
      claimStaleAfterMs: 200,
    });
    try {
      const result = await app.invoke(user("charge"), { threadId: "t-stuck", toolTimeout: 0.1 });
      expect(effects).toEqual([]);
      expect(toolText(result.state, "call_1")).toBe(
        "Tool 'charge_card' failed: [TOOL_CONFLICT_001] another execution (run stuck-run) is running this call and did not finish in time; it was not run twice",
      );
      expect((await app.getToolLedger({ threadId: "t-stuck" }))[0]).toMatchObject({
        status: "started",
        ownerRunId: "stuck-run",
      });
    } finally {
      clearInterval(heartbeat);
    }
  });

  it("keeps heartbeating a claim while its result is being recorded: a slow record is not taken for a crash", async () => {
    const checkpointer = new ObservedLedger();
    checkpointer.holdFirstRecord = true;
    const { charge, effects, second } = countedCharge();
    const options = {
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "Done."],
      tools: [charge],
      checkpointer,
      claimStaleAfterMs: 200,
      stopPollIntervalMs: 20,
    };
    const a = supportAgent(options);
    const b = supportAgent(options);
    const runA = a.invoke(user("charge"), { threadId: "t-slow-record" }).then(
      () => null,
      (e: unknown) => e,
    );
    await checkpointer.recording.promise; // A's tool returned; its record is on the way
    const runB = b.invoke(null, { threadId: "t-slow-record" });
    // Five reads of B's are about 400 ms: twice claimStaleAfterMs, while A is still recording.
    await Promise.race([checkpointer.readsFromNow(5), second.promise]);
    checkpointer.releaseRecord.resolve();

    const resultB = await runB;
    expect(effects).toEqual(["charge 4821 attempt 1"]);
    expect(toolText(resultB.state, "call_1")).toBe("Charged order 4821");
    expect(await runA).toMatchObject({ code: "STORAGE_CONFLICT_001" });
    expect(await b.getToolLedger({ threadId: "t-slow-record" })).toMatchObject([
      { key: "m-1:call_1", status: "completed", attempt: 1 },
    ]);
  });

  it("judges staleness by the store's clock: a live claim is waited on even when the store's clock is 5 s behind", async () => {
    const checkpointer = new ObservedLedger({ clock: () => new Date(Date.now() - 5000) });
    const gate = deferred();
    const { charge, effects, entered, second } = countedCharge({ gate: gate.promise });
    const options = {
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "Done."],
      tools: [charge],
      checkpointer,
      claimStaleAfterMs: 1000,
      stopPollIntervalMs: 100,
    };
    const a = supportAgent(options);
    const b = supportAgent(options);
    const runA = a.invoke(user("charge"), { threadId: "t-skew" }).then(
      () => null,
      (e: unknown) => e,
    );
    await entered.promise;
    const runB = collectEvents(b.stream(null, { threadId: "t-skew" }));
    await Promise.race([checkpointer.readsFromNow(3), second.promise]);
    gate.resolve();

    const { events } = await runB;
    expect(effects).toEqual(["charge 4821 attempt 1"]);
    expect(ofType(events, "tool_result")[0]).toMatchObject({ replayed: true, isError: false });
    expect(ofType(events, "run_end")[0]?.status).toBe("completed");
    expect(await runA).toMatchObject({ code: "STORAGE_CONFLICT_001" });
  });

  it("names the execution holding the claim when it gave up, not the one it first saw", async () => {
    class TakenOverOnRead extends InMemoryCheckpointer {
      onFirstRead?: () => Promise<void>;
      override async getCalls(threadId: string, keys: string[]) {
        const entries = await super.getCalls(threadId, keys);
        const hook = this.onFirstRead;
        this.onFirstRead = undefined;
        await hook?.();
        return entries;
      }
    }
    const checkpointer = new TakenOverOnRead();
    const first = await liveClaim(checkpointer, "t-handover", "first-run");
    let heartbeat = first.heartbeat;
    // Right after the runtime's first read, another execution takes the claim over and keeps it.
    checkpointer.onFirstRead = async () => {
      clearInterval(heartbeat);
      await checkpointer.claimCalls("t-handover", [
        {
          key: "m-1:call_1",
          toolName: "charge_card",
          ownerRunId: "second-run",
          expectedAttempt: 1,
        },
      ]);
      const held = { key: "m-1:call_1", attempt: 2 };
      heartbeat = setInterval(() => void checkpointer.heartbeatCalls("t-handover", [held]), 10);
    };
    const effects: string[] = [];
    const app = supportAgent<S>({
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "ok"],
      tools: supportTools(effects),
      checkpointer,
      claimStaleAfterMs: 200,
    });
    try {
      const result = await app.invoke(user("charge"), { threadId: "t-handover", toolTimeout: 0.1 });
      expect(effects).toEqual([]);
      expect(toolText(result.state, "call_1")).toBe(
        "Tool 'charge_card' failed: [TOOL_CONFLICT_001] another execution (run second-run) is running this call and did not finish in time; it was not run twice",
      );
    } finally {
      clearInterval(heartbeat);
    }
  });

  it("gives up with TOOL_CONFLICT_001 at the deadline even when every ledger read fails meanwhile", async () => {
    const blind = new AbortController();
    class ReadsFailWhileWaiting extends InMemoryCheckpointer {
      reads = 0;
      override async getCalls(threadId: string, keys: string[]) {
        this.reads += 1;
        if (this.reads === 1) return super.getCalls(threadId, keys);
        // About two seconds of failed reads, far past the deadline: a wait that never checks
        // it is ended here, so the test fails instead of hanging.
        if (this.reads > 20) blind.abort();
        throw new Error("ledger table unavailable");
      }
    }
    const checkpointer = new ReadsFailWhileWaiting();
    const { heartbeat } = await liveClaim(checkpointer, "t-blind", "stuck-run");
    const effects: string[] = [];
    const app = supportAgent<S>({
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "ok"],
      tools: supportTools(effects),
      checkpointer,
      claimStaleAfterMs: 200,
    });
    try {
      const result = await app.invoke(user("charge"), {
        threadId: "t-blind",
        toolTimeout: 0.1,
        signal: blind.signal,
      });
      expect(result.status).toBe("completed");
      expect(effects).toEqual([]);
      expect(toolText(result.state, "call_1")).toBe(
        "Tool 'charge_card' failed: [TOOL_CONFLICT_001] another execution (run stuck-run) is running this call and did not finish in time; it was not run twice",
      );
      expect(checkpointer.reads).toBeGreaterThan(1);
    } finally {
      clearInterval(heartbeat);
    }
  });

  it("never runs one call twice when two processes continue the same thread", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const effects: string[] = [];
    const gate = deferred();
    const entered = deferred();
    const slowCharge = tool({
      name: "charge_card",
      description: "Charge the card (slowly).",
      schema: z.object({ order_id: z.string() }),
      execute: async (args) => {
        entered.resolve();
        await gate.promise;
        effects.push(`charge ${args.order_id}`);
        return `Charged order ${args.order_id}`;
      },
    });
    const options = {
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "Done."],
      tools: [slowCharge],
      checkpointer,
      stopPollIntervalMs: 10,
      claimStaleAfterMs: 300,
    };
    const a = supportAgent(options);
    const b = supportAgent(options);
    const outcomeA = a.invoke(user("charge"), { threadId: "t-race" }).then(
      () => null,
      (e: unknown) => e,
    );
    await entered.promise;
    const runB = collectEvents(b.stream(null, { threadId: "t-race" }));
    await pause(400); // B waits on A's claim, kept live by A's heartbeats
    gate.resolve();

    const { events } = await runB;
    expect(effects).toEqual(["charge 4821"]);
    expect(ofType(events, "tool_result")[0]).toMatchObject({ replayed: true, isError: false });
    expect(ofType(events, "run_end")[0]?.status).toBe("completed");
    const error = await outcomeA;
    expect(isTenxgraphError(error) && error.code).toBe("STORAGE_CONFLICT_001");
    expect(await a.getToolLedger({ threadId: "t-race" })).toMatchObject([
      { key: "m-1:call_1", status: "completed", attempt: 1 },
    ]);
  });

  it("fences a superseded attempt: its late completion returns false and writes nothing", async () => {
    const checkpointer = new RecordingCheckpointer();
    const effects: string[] = [];
    const gate = deferred();
    const entered = deferred();
    let calls = 0;
    const charge = tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: z.object({ order_id: z.string() }),
      execute: async (_args, ctx) => {
        calls += 1;
        if (calls === 1) {
          entered.resolve();
          await gate.promise; // the first process hangs (and stops heartbeating)
        }
        effects.push(`charge attempt ${ctx.attempt}`);
        return `Charged (attempt ${ctx.attempt})`;
      },
    });
    const logger = recordingLogger();
    const base = {
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "Done."],
      tools: [charge],
      checkpointer,
      logger,
    };
    const a = supportAgent({ ...base, stopPollIntervalMs: 60_000, claimStaleAfterMs: 120_000 });
    const b = supportAgent({ ...base, claimStaleAfterMs: 50 });
    const runA = a.invoke(user("charge"), { threadId: "t-fence" });
    await entered.promise;
    await pause(80);
    const resultB = await b.invoke(null, { threadId: "t-fence" });
    gate.resolve();
    await expect(runA).rejects.toMatchObject({ code: "STORAGE_CONFLICT_001" });

    expect(effects).toEqual(["charge attempt 2", "charge attempt 1"]);
    expect(toolText(resultB.state, "call_1")).toBe("Charged (attempt 2)");
    expect(checkpointer.completions).toEqual([
      { attempt: 2, recorded: true },
      { attempt: 1, recorded: false },
    ]);
    const [entry] = (await b.getToolLedger({ threadId: "t-fence" })) as CompletedLedgerEntry[];
    expect(entry).toMatchObject({ attempt: 2, status: "completed", ownerRunId: resultB.runId });
    expect(JSON.stringify(entry!.result)).toContain("Charged (attempt 2)");
    expect(logger.find("warn", "fenced out")[0]?.fields).toMatchObject({ attempt: 1 });
    expect(
      await checkpointer.completeCall("t-fence", { key: "m-1:call_1", attempt: 1 }, "late"),
    ).toBe(false);
  });
});

describe("domain idempotency keys", () => {
  function keyedCharge(effects: string[], contexts: ToolContext[]) {
    return tool({
      name: "charge_card",
      description: "Charge the card, once per order.",
      schema: z.object({ order_id: z.string(), amount_cents: z.number() }),
      idempotencyKey: (args) => `order-${args.order_id}-charge`,
      execute: (args, ctx) => {
        contexts.push(ctx);
        effects.push(`charge ${args.order_id}`);
        return `Charged ${args.amount_cents / 100} USD`;
      },
    });
  }

  it.each([
    ["its own call id", "call_7"],
    ["the reused call_1", "call_1"],
  ])(
    "runs the business fact once across turns; the later turn, with %s, gets the recorded result",
    async (_label, secondId) => {
      const effects: string[] = [];
      const contexts: ToolContext[] = [];
      const metrics = testMeter();
      const args = { order_id: "4821", amount_cents: 4200 };
      const app = supportAgent({
        model: [
          callsTurn("m-1", [["charge_card", args, "call_1"]]),
          "Charged.",
          callsTurn("m-2", [["charge_card", args, secondId]]),
          "It was already charged.",
        ],
        tools: [keyedCharge(effects, contexts)],
        meter: metrics.meter,
      });

      await app.invoke(user("charge order 4821"), { threadId: "t-domain" });
      const result = await app.invoke(user("charge it again"), { threadId: "t-domain" });

      expect(effects).toEqual(["charge 4821"]);
      expect(contexts.map((c) => [c.idempotencyKey, c.messageId, c.toolCallId])).toEqual([
        ["order-4821-charge", "m-1", "call_1"],
      ]);
      const answers = toolMessages(result.state);
      expect(answers.map((m) => [m.toolCallId, Message.text(m)])).toEqual([
        ["call_1", "Charged 42 USD"],
        [secondId, "Charged 42 USD"],
      ]);
      expect(new Set(answers.map((m) => m.id)).size).toBe(2);
      expect(await metrics.sum("tenxgraph.tool.ledger_hits")).toBe(1);
      const ledger = await app.getToolLedger({ threadId: "t-domain" });
      expect(ledger.map((e) => [e.key, e.status, e.attempt])).toEqual([
        ["order-4821-charge", "completed", 1],
      ]);
    },
  );

  it("runs the tool again for a later call when the recorded result is a failure", async () => {
    const effects: string[] = [];
    let declines = 1;
    const charge = tool({
      name: "charge_card",
      description: "Charge the card, once per order.",
      schema: z.object({ order_id: z.string() }),
      idempotencyKey: (args) => `order-${args.order_id}-charge`,
      execute: (args) => {
        effects.push(`charge ${args.order_id}`);
        if (declines-- > 0) throw new Error("card declined");
        return "Charged";
      },
    });
    const args = { order_id: "4821" };
    const app = supportAgent({
      model: [
        callsTurn("m-1", [["charge_card", args, "call_1"]]),
        "It was declined.",
        callsTurn("m-2", [["charge_card", args, "call_1"]]),
        "Charged now.",
      ],
      tools: [charge],
    });

    const first = await app.invoke(user("charge"), { threadId: "t-declined" });
    expect(toolText(first.state, "call_1")).toContain("[TOOL_ERROR_001] card declined");
    const second = await app.invoke(user("try again"), { threadId: "t-declined" });

    // The failed fact did not happen, so the second call charges; the first turn's error stays.
    expect(effects).toEqual(["charge 4821", "charge 4821"]);
    expect(toolMessages(second.state).map((m) => Message.text(m))).toEqual([
      "Tool 'charge_card' failed: [TOOL_ERROR_001] card declined",
      "Charged",
    ]);
    const ledger = await app.getToolLedger({ threadId: "t-declined" });
    expect(ledger.map((e) => [e.key, e.status, e.attempt])).toEqual([
      ["order-4821-charge", "completed", 2],
    ]);
  });

  it("replays a timeout recorded under the domain key by an earlier turn instead of running the fact again", async () => {
    const effects: string[] = [];
    const charge = tool({
      name: "charge_card",
      description: "Charge the card, once per order.",
      schema: z.object({ order_id: z.string() }),
      idempotencyKey: (args) => `order-${args.order_id}-charge`,
      timeout: 0.05,
      execute: (args, ctx) => {
        effects.push(`charge ${args.order_id}`);
        return untilAborted(ctx.signal); // may have charged; the outcome is unknown
      },
    });
    const args = { order_id: "4821" };
    const app = supportAgent({
      model: [
        callsTurn("m-1", [["charge_card", args, "call_1"]]),
        "It timed out.",
        callsTurn("m-2", [["charge_card", args, "call_1"]]),
        "Still unknown.",
      ],
      tools: [charge],
    });
    const timedOut =
      "Tool 'charge_card' failed: [NODE_TIMEOUT_002] Tool 'charge_card' timed out after 0.05 s";

    const first = await app.invoke(user("charge"), { threadId: "t-timeout-fact" });
    expect(toolText(first.state, "call_1")).toBe(timedOut);
    const second = await app.invoke(user("try again"), { threadId: "t-timeout-fact" });

    expect(effects).toEqual(["charge 4821"]);
    expect(toolMessages(second.state).map((m) => Message.text(m))).toEqual([timedOut, timedOut]);
    const ledger = await app.getToolLedger({ threadId: "t-timeout-fact" });
    expect(ledger.map((e) => [e.key, e.status, e.attempt])).toEqual([
      ["order-4821-charge", "completed", 1],
    ]);
  });

  it("replaying another turn's fact does not roll state fields back to that turn's values", async () => {
    type Log = { messages: Message[]; log: string[] };
    const charge = tool<z.ZodObject<{ order_id: z.ZodString }>, Log>({
      name: "charge_card",
      description: "Charge the card, once per order.",
      schema: z.object({ order_id: z.string() }),
      idempotencyKey: (args) => `order-${args.order_id}-charge`,
      execute: (args, ctx) => {
        ctx.state.log = [...ctx.state.log, `charged ${args.order_id}`];
        return "Charged";
      },
    });
    const email = tool<z.ZodObject<Record<string, never>>, Log>({
      name: "send_email",
      description: "Email the customer.",
      schema: z.object({}),
      execute: (_args, ctx) => {
        ctx.state.log = [...ctx.state.log, "emailed"];
        return "Sent";
      },
    });
    const app = supportAgent<Log>({
      model: [
        callsTurn("m-1", [["charge_card", { order_id: "4821" }]]),
        "Charged.",
        callsTurn("m-2", [["send_email", {}]]),
        "Sent.",
        callsTurn("m-3", [["charge_card", { order_id: "4821" }]]),
        "It was already charged.",
      ],
      tools: [charge, email],
      state: { initialState: { log: [] } },
    });
    const threadId = "t-no-rollback";
    await app.invoke(user("charge"), { threadId });
    await app.invoke(user("email me"), { threadId });
    const result = await app.invoke(user("charge again"), { threadId });

    expect(result.state.log).toEqual(["charged 4821", "emailed"]);
    expect((await app.getState({ threadId }))?.values.log).toEqual(["charged 4821", "emailed"]);
    expect(toolMessages(result.state).map((m) => Message.text(m))).toEqual([
      "Charged",
      "Sent",
      "Charged",
    ]);
  });

  it("runs once when one message asks twice for the same domain key", async () => {
    const effects: string[] = [];
    const contexts: ToolContext[] = [];
    const args = { order_id: "4821", amount_cents: 4200 };
    const app = supportAgent({
      model: [
        callsTurn("m-1", [
          ["charge_card", args],
          ["charge_card", args],
        ]),
        "ok",
      ],
      tools: [keyedCharge(effects, contexts)],
    });
    const result = await app.invoke(user("charge"), { threadId: "t-twice" });

    expect(effects).toEqual(["charge 4821"]);
    expect(toolMessages(result.state).map((m) => [m.toolCallId, Message.text(m)])).toEqual([
      ["call_1", "Charged 42 USD"],
      ["call_2", "Charged 42 USD"],
    ]);
  });
});
