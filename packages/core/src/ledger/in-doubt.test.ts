import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Message } from "../messages/message.js";
import { FaultPoints } from "../testing/fault-points.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import {
  callsTurn,
  collectEvents,
  deferred,
  LedgerReadsCheckpointer,
  ofType,
  pause,
  recordingLogger,
  supportAgent,
  testMeter,
  toolText,
} from "../support/helpers.js";
import type { ToolContext } from "../tools/tool-context.js";
import { tool, type InDoubtPolicy } from "../tools/tool.js";
import {
  IN_DOUBT_INTERRUPT_KIND,
  inDoubtDecisionSchema,
  parseInDoubtDecision,
} from "../node/in-doubt-decision.js";
import type { CompletedLedgerEntry } from "../storage/ledger-entry.js";

const KEY = "m-1:call_1";
const ARGS = { order_id: "4821", amount_cents: 4200 };
const user = (text: string) => ({ messages: [Message.user(text)] });
type Args = typeof ARGS;

/**
 * A support agent whose `charge_card` call `m-1:call_1` was claimed by a process that died
 * (attempt 1, never completed, its 50 ms lease expired).
 */
async function afterDeadClaim(threadId: string, onInDoubt?: InDoubtPolicy<Args>) {
  const checkpointer = new InMemoryCheckpointer();
  await checkpointer.claimCalls(threadId, [
    { key: KEY, toolName: "charge_card", ownerRunId: "dead-run", leaseMs: 50, expectedAttempt: 0 },
  ]);
  await pause(60);
  const effects: string[] = [];
  const contexts: ToolContext[] = [];
  const chargeCard = tool({
    name: "charge_card",
    description: "Charge the card.",
    schema: z.object({ order_id: z.string(), amount_cents: z.number() }),
    ...(onInDoubt ? { onInDoubt } : {}),
    execute: (args, ctx) => {
      contexts.push(ctx);
      effects.push(`charge ${args.order_id}`);
      return `Charged ${args.amount_cents / 100} USD`;
    },
  });
  const metrics = testMeter();
  const logger = recordingLogger();
  const app = supportAgent({
    model: [callsTurn("m-1", [["charge_card", ARGS]]), "Done."],
    tools: [chargeCard],
    checkpointer,
    claimStaleAfterMs: 50,
    meter: metrics.meter,
    logger,
  });
  const entry = async () =>
    (await app.getToolLedger({ threadId })).find((e) => e.key === KEY) as CompletedLedgerEntry;
  return { app, effects, contexts, metrics, logger, entry };
}

describe("in doubt: a call claimed but never completed", () => {
  it("is a stream event, before the call's result, naming the call, its attempt and policy", async () => {
    const { app } = await afterDeadClaim("t-event", "fail");

    const { events } = await collectEvents(app.stream(user("charge"), { threadId: "t-event" }));

    const inDoubt = ofType(events, "tool_in_doubt");
    expect(inDoubt).toEqual([
      {
        type: "tool_in_doubt",
        node: "TOOL",
        key: KEY,
        toolCallId: "call_1",
        toolName: "charge_card",
        attempt: 1,
        policy: "fail",
      },
    ]);
    const order = events.map((e) => e.type);
    expect(order.indexOf("tool_in_doubt")).toBeLessThan(order.indexOf("tool_result"));
  });

  it("retries by default: runs again as attempt 2 with the same key, counted and logged", async () => {
    const { app, effects, contexts, metrics, logger, entry } = await afterDeadClaim("t-retry");

    const result = await app.invoke(user("charge"), { threadId: "t-retry" });

    expect(result.status).toBe("completed");
    expect(effects).toEqual(["charge 4821"]);
    expect(contexts.map((c) => [c.attempt, c.idempotencyKey])).toEqual([[2, KEY]]);
    expect(toolText(result.state, "call_1")).toBe("Charged 42 USD");
    expect(await metrics.sum("tenxgraph.tool.in_doubt", { policy: "retry" })).toBe(1);
    const [warning] = logger.find("warn", "IN DOUBT");
    expect(warning?.message).toBe(
      "Tool call is IN DOUBT: it started but was never recorded, so it may or may not have taken effect",
    );
    expect(warning?.fields).toMatchObject({
      key: KEY,
      tool: "charge_card",
      attempt: 1,
      policy: "retry",
      threadId: "t-retry",
    });
    expect(await entry()).toMatchObject({
      status: "completed",
      attempt: 2,
      ownerRunId: result.runId,
    });
  });

  it("fails under 'fail': the model is told the outcome is unknown and the tool does not run", async () => {
    const { app, effects, metrics, entry } = await afterDeadClaim("t-fail", "fail");

    const result = await app.invoke(user("charge"), { threadId: "t-fail" });

    expect(effects).toEqual([]);
    const text =
      "Tool 'charge_card' failed: [TOOL_IN_DOUBT_001] outcome unknown: attempt 1 started but was never recorded; " +
      "it may or may not have taken effect, so check before calling it again";
    expect(toolText(result.state, "call_1")).toBe(text);
    expect(result.state.messages.find((m) => m.role === "tool")).toMatchObject({ isError: true });
    expect(await metrics.sum("tenxgraph.tool.in_doubt", { policy: "fail" })).toBe(1);
    const recorded = await entry();
    expect(recorded).toMatchObject({ status: "completed", attempt: 2 });
    expect(recorded.result).toMatchObject({ __kind__: "message", value: { content: text } });
  });

  it("tells a call paused in interrupt() (released, not in doubt) apart from a dead claim", async () => {
    const { app, effects, metrics } = await afterDeadClaim("t-released", "fail");
    const checkpointer = app.checkpointer;
    // The dead process had paused in interrupt(): its claim was released, so it is not in doubt.
    expect(await checkpointer.releaseCall("t-released", { key: KEY, attempt: 1 })).toBe(true);

    await app.invoke(user("charge"), { threadId: "t-released" });

    expect(effects).toEqual(["charge 4821"]);
    expect(await metrics.sum("tenxgraph.tool.in_doubt")).toBe(0);
  });

  it("treats a call of a run that ended in this process as in doubt at once, without waiting for staleness", async () => {
    const effects: string[] = [];
    const contexts: ToolContext[] = [];
    const chargeCard = tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: z.object({ order_id: z.string(), amount_cents: z.number() }),
      execute: (args, ctx) => {
        contexts.push(ctx);
        effects.push(`charge ${args.order_id}`);
        return "Charged";
      },
    });
    const faults = new FaultPoints().arm(
      "tool.after_return",
      () => {
        throw new Error("crashed before the record");
      },
      { times: 1 },
    );
    const app = supportAgent({
      model: [callsTurn("m-1", [["charge_card", ARGS]]), "Done."],
      tools: [chargeCard],
      faultPoints: faults,
      // An hour: only knowing that the claimant is a run of this graph that ended lets the
      // resume go ahead before the test's own timeout.
      claimStaleAfterMs: 3_600_000,
    });

    await expect(app.invoke(user("charge"), { threadId: "t-local" })).rejects.toThrow(
      "crashed before the record",
    );
    const failed = await app.getState({ threadId: "t-local" });
    expect([failed?.status, failed?.currentNode]).toEqual(["failed", "TOOL"]);
    expect((await app.getToolLedger({ threadId: "t-local" }))[0]?.status).toBe("started");

    const result = await app.invoke(null, { threadId: "t-local" });

    expect(result.status).toBe("completed");
    expect(effects).toEqual(["charge 4821", "charge 4821"]);
    expect(contexts.map((c) => c.attempt)).toEqual([1, 2]);
  });
  it("still fails under 'fail' when the takeover claim itself fails: the tool does not run", async () => {
    class ClaimsFailLater extends InMemoryCheckpointer {
      failClaims = false;
      override async claimCalls(...args: Parameters<InMemoryCheckpointer["claimCalls"]>) {
        if (this.failClaims) throw new Error("connection reset");
        return super.claimCalls(...args);
      }
    }
    const checkpointer = new ClaimsFailLater();
    const contexts: ToolContext[] = [];
    const chargeCard = tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: z.object({ order_id: z.string(), amount_cents: z.number() }),
      onInDoubt: "fail",
      execute: (_args, ctx) => {
        contexts.push(ctx);
        return "Charged";
      },
    });
    const faults = new FaultPoints().arm(
      "tool.after_return",
      () => {
        throw new Error("crashed before the record");
      },
      { times: 1 },
    );
    const metrics = testMeter();
    const app = supportAgent({
      model: [callsTurn("m-1", [["charge_card", ARGS]]), "Done."],
      tools: [chargeCard],
      checkpointer,
      faultPoints: faults,
      meter: metrics.meter,
    });
    await expect(app.invoke(user("charge"), { threadId: "t-fail-noclaim" })).rejects.toThrow(
      "crashed before the record",
    );
    checkpointer.failClaims = true;

    const result = await app.invoke(null, { threadId: "t-fail-noclaim" });

    expect(result.status).toBe("completed");
    expect(contexts.map((c) => c.attempt)).toEqual([1]);
    expect(toolText(result.state, "call_1")).toBe(
      "Tool 'charge_card' failed: [TOOL_IN_DOUBT_001] outcome unknown: attempt 1 started but was never recorded; " +
        "it may or may not have taken effect, so check before calling it again",
    );
    expect(await metrics.sum("tenxgraph.tool.in_doubt", { policy: "fail" })).toBe(1);
    // Nothing could be claimed, so nothing was recorded: the call stays in doubt.
    expect((await app.getToolLedger({ threadId: "t-fail-noclaim" }))[0]).toMatchObject({
      status: "started",
      attempt: 1,
    });
  });
});

describe("in doubt under 'interrupt'", () => {
  async function interrupted(threadId: string) {
    const agent = await afterDeadClaim(threadId, "interrupt");
    const first = await agent.app.invoke(user("charge"), { threadId });
    return { ...agent, first };
  }

  it("pauses the run for a human with the call's name and arguments", async () => {
    const { app, effects, first, metrics } = await interrupted("t-ask");

    expect(first.status).toBe("interrupted");
    expect(effects).toEqual([]);
    expect(first.interrupts).toHaveLength(1);
    const [pending] = first.interrupts;
    expect(pending).toMatchObject({
      id: `${KEY}:in-doubt-1`,
      node: "TOOL",
      toolCallId: "call_1",
      value: {
        kind: IN_DOUBT_INTERRUPT_KIND,
        tool: "charge_card",
        arguments: ARGS,
        key: KEY,
        attempt: 1,
      },
    });
    expect(IN_DOUBT_INTERRUPT_KIND).toBe("tool_in_doubt");
    expect(pending?.message).toContain(
      "Tool 'charge_card' started but its result was never recorded",
    );
    const saved = await app.getState({ threadId: "t-ask" });
    expect(saved?.status).toBe("interrupted");
    expect(saved?.interrupts).toEqual(first.interrupts);
    expect(await metrics.sum("tenxgraph.tool.in_doubt", { policy: "interrupt" })).toBe(1);
    // Nothing was claimed while the human decides.
    expect((await app.getToolLedger({ threadId: "t-ask" }))[0]).toMatchObject({
      status: "started",
      attempt: 1,
      ownerRunId: "dead-run",
    });
  });

  it("runs the tool again on { action: 'retry' }", async () => {
    const { app, effects, contexts, entry, metrics } = await interrupted("t-ask-retry");

    const result = await app.invoke({ resume: { action: "retry" } }, { threadId: "t-ask-retry" });

    // Counted when the question was asked, not again when the answer arrived.
    expect(await metrics.sum("tenxgraph.tool.in_doubt", { policy: "interrupt" })).toBe(1);
    expect(result.status).toBe("completed");
    expect(effects).toEqual(["charge 4821"]);
    expect(contexts[0]?.attempt).toBe(2);
    expect(toolText(result.state, "call_1")).toBe("Charged 42 USD");
    expect(await entry()).toMatchObject({ status: "completed", attempt: 2 });
  });

  it("records the human's result without running the tool on { action: 'complete' }", async () => {
    const { app, effects, entry } = await interrupted("t-ask-complete");

    const { events } = await collectEvents(
      app.stream({ resume: { action: "complete", result: "x" } }, { threadId: "t-ask-complete" }),
    );

    expect(effects).toEqual([]);
    const [result] = ofType(events, "tool_result");
    expect(result).toMatchObject({ key: KEY, replayed: false, isError: false });
    expect(Message.text(result!.message)).toBe("x");
    expect(ofType(events, "run_end")[0]?.status).toBe("completed");
    const recorded = await entry();
    expect(recorded).toMatchObject({ status: "completed", attempt: 2 });
    expect(recorded.result).toMatchObject({ __kind__: "message", value: { content: "x" } });
  });

  it("gives the model an error on { action: 'fail' }, with the human's reason", async () => {
    const { app, effects } = await interrupted("t-ask-fail");

    const result = await app.invoke(
      { resume: { action: "fail", reason: "the bank says it never arrived" } },
      { threadId: "t-ask-fail" },
    );

    expect(effects).toEqual([]);
    expect(toolText(result.state, "call_1")).toBe(
      "Tool 'charge_card' failed: [TOOL_IN_DOUBT_001] outcome unknown: the bank says it never arrived; " +
        "it may or may not have taken effect, so check before calling it again",
    );
  });

  it("rejects an invalid answer with RESUME_004 and keeps the thread waiting", async () => {
    const { app, effects, first } = await interrupted("t-ask-bad");
    const before = await app.getState({ threadId: "t-ask-bad" });

    await expect(
      app.invoke({ resume: { action: "nope" } }, { threadId: "t-ask-bad" }),
    ).rejects.toMatchObject({ code: "RESUME_004", name: "InvalidRunError" });
    await expect(app.invoke({ resume: "yes" }, { threadId: "t-ask-bad" })).rejects.toThrow(
      /must be \{ action: "retry" \}.*got "yes"/,
    );

    expect(await app.getState({ threadId: "t-ask-bad" })).toEqual(before);
    expect(before?.interrupts).toEqual(first.interrupts);
    const result = await app.invoke(
      { resume: { action: "fail" }, interruptId: first.interrupts[0]!.id },
      { threadId: "t-ask-bad" },
    );
    expect(effects).toEqual([]);
    expect(toolText(result.state, "call_1")).toContain("a human marked it failed");
  });
});

describe("in doubt under { reconcile }", () => {
  it("records what reconcile() returns and does not run the tool", async () => {
    const asked: { args: unknown; attempt: number; key: string }[] = [];
    const { app, effects, entry } = await afterDeadClaim("t-rec", {
      async reconcile(args, ctx) {
        asked.push({ args, attempt: ctx.attempt, key: ctx.idempotencyKey });
        return { charge_id: "ch_1", status: "succeeded" };
      },
    });

    const result = await app.invoke(user("charge"), { threadId: "t-rec" });

    expect(effects).toEqual([]);
    expect(asked).toEqual([{ args: ARGS, attempt: 2, key: KEY }]);
    expect(toolText(result.state, "call_1")).toBe('{"charge_id":"ch_1","status":"succeeded"}');
    const recorded = await entry();
    expect(recorded).toMatchObject({ status: "completed", attempt: 2 });
    expect(recorded.result).toMatchObject({
      value: { content: '{"charge_id":"ch_1","status":"succeeded"}' },
    });
  });

  it("runs the tool when reconcile() returns undefined (it did not happen)", async () => {
    let asked = 0;
    const { app, effects, contexts, metrics } = await afterDeadClaim("t-rec-none", {
      reconcile: () => {
        asked += 1;
        return undefined;
      },
    });

    const result = await app.invoke(user("charge"), { threadId: "t-rec-none" });

    expect(asked).toBe(1);
    expect(effects).toEqual(["charge 4821"]);
    expect(contexts[0]?.attempt).toBe(2);
    expect(toolText(result.state, "call_1")).toBe("Charged 42 USD");
    expect(await metrics.sum("tenxgraph.tool.in_doubt", { policy: "reconcile" })).toBe(1);
  });

  it("heartbeats its claim while reconcile() runs: a concurrent execution waits instead of acting on it", async () => {
    let skewMs = -60_000;
    const checkpointer = new LedgerReadsCheckpointer({
      clock: () => new Date(Date.now() + skewMs),
    });
    const threadId = "t-rec-live";
    // A claim whose last heartbeat was a minute ago, with a 3 s lease: its process is gone.
    await checkpointer.claimCalls(threadId, [
      {
        key: KEY,
        toolName: "charge_card",
        ownerRunId: "dead-run",
        leaseMs: 3000,
        expectedAttempt: 0,
      },
    ]);
    skewMs = 0;
    const effects: string[] = [];
    const reconciles: string[] = [];
    const entered = deferred();
    const gate = deferred();
    const second = deferred();
    const chargeCard = tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: z.object({ order_id: z.string(), amount_cents: z.number() }),
      onInDoubt: {
        reconcile: async (_args, ctx) => {
          reconciles.push(ctx.runId);
          if (reconciles.length > 1) {
            second.resolve();
            return "reconciled again";
          }
          entered.resolve();
          await gate.promise; // a slow payments API
          return "already charged";
        },
      },
      execute: (args) => {
        effects.push(`charge ${args.order_id}`);
        return "Charged";
      },
    });
    const options = {
      model: [callsTurn("m-1", [["charge_card", ARGS]]), "Done."],
      tools: [chargeCard],
      checkpointer,
      claimStaleAfterMs: 200,
      stopPollIntervalMs: 20,
    };
    const a = supportAgent(options);
    const b = supportAgent(options);
    const runA = a.invoke(user("charge"), { threadId }).then(
      () => null,
      (e: unknown) => e,
    );
    await entered.promise;
    const runB = b.invoke(null, { threadId });
    // Five reads of B's are about 400 ms, twice claimStaleAfterMs, while reconcile() runs.
    await Promise.race([checkpointer.readsFromNow(5), second.promise]);
    gate.resolve();

    const resultB = await runB;
    expect(reconciles).toHaveLength(1);
    expect(effects).toEqual([]);
    expect(toolText(resultB.state, "call_1")).toBe("already charged");
    expect(await runA).toMatchObject({ code: "STORAGE_CONFLICT_001" });
    expect((await b.getToolLedger({ threadId }))[0]).toMatchObject({
      status: "completed",
      attempt: 2,
    });
  });

  it("reports a reconcile() that throws as still in doubt, without running the tool", async () => {
    const { app, effects } = await afterDeadClaim("t-rec-throw", {
      reconcile: () => {
        throw new Error("payments API unreachable");
      },
    });

    const result = await app.invoke(user("charge"), { threadId: "t-rec-throw" });

    expect(effects).toEqual([]);
    expect(toolText(result.state, "call_1")).toBe(
      "Tool 'charge_card' failed: [TOOL_IN_DOUBT_001] reconcile() failed, outcome still unknown: payments API unreachable",
    );
  });
});

describe("in-doubt decisions", () => {
  it("accepts the three actions", () => {
    expect(parseInDoubtDecision({ action: "retry" })).toEqual({ action: "retry" });
    expect(parseInDoubtDecision({ action: "complete", result: { id: 1 } })).toEqual({
      action: "complete",
      result: { id: 1 },
    });
    expect(parseInDoubtDecision({ action: "fail", reason: "declined" })).toEqual({
      action: "fail",
      reason: "declined",
    });
    expect(inDoubtDecisionSchema.safeParse({ action: "fail" }).success).toBe(true);
  });

  it.each([[{ action: "nope" }], [null], ["retry"], [{ action: "fail", reason: 7 }]])(
    "refuses %j with RESUME_004",
    (answer) => {
      expect(() => parseInDoubtDecision(answer)).toThrow(
        expect.objectContaining({ code: "RESUME_004" }),
      );
    },
  );
});
