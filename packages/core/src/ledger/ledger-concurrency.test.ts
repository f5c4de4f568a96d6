import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { Message } from "../messages/message.js";
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
  toolText,
  withoutStepWrites,
} from "../support/helpers.js";
import { tool, type AnyTool } from "../tools/tool.js";
import { messageEnvelope } from "./envelope.js";
import type { AttemptRef, CompletedLedgerEntry } from "../storage/ledger-entry.js";
import { supportTools, user, type S } from "../support/ledger-tools.js";

/**
 * Records what every fenced completion returned. Its heartbeats renew nothing, as if every
 * process on it were paused whenever it tried: claims live only as long as their first lease.
 */
class RecordingCheckpointer extends InMemoryCheckpointer {
  readonly completions: { attempt: number; recorded: boolean }[] = [];
  override async heartbeatCalls(): Promise<AttemptRef[]> {
    return [];
  }
  override async completeCall(threadId: string, ref: AttemptRef, result: unknown) {
    const recorded = await super.completeCall(threadId, ref, result);
    this.completions.push({ attempt: ref.attempt, recorded });
    return recorded;
  }
}

/** A claim on `m-1:call_1` held by another execution that keeps heartbeating it (see LIVE_LEASE_MS). */
/**
 * The live holder's lease: long enough that a test process stalled by a loaded machine (a
 * heartbeat late by hundreds of milliseconds) does not lose it, short next to the waits below.
 */
const LIVE_LEASE_MS = 1_000;

async function liveClaim(checkpointer: InMemoryCheckpointer, threadId: string, ownerRunId: string) {
  const held = { key: "m-1:call_1", attempt: 1 };
  await checkpointer.claimCalls(threadId, [
    {
      key: held.key,
      toolName: "charge_card",
      ownerRunId,
      leaseMs: LIVE_LEASE_MS,
      expectedAttempt: 0,
    },
  ]);
  const heartbeat = setInterval(
    () => void checkpointer.heartbeatCalls(threadId, [held], LIVE_LEASE_MS),
    10,
  );
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

/**
 * Two graphs ("processes") on one store. A starts a turn whose model asks for one charge; its
 * outcome resolves to the error it ended with, or null. B is ready to continue the thread.
 */
function twoWorkers(
  charge: AnyTool,
  checkpointer: InMemoryCheckpointer,
  threadId: string,
  timing: { claimStaleAfterMs: number; stopPollIntervalMs: number },
) {
  const options = {
    model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "Done."],
    tools: [charge],
    checkpointer,
    ...timing,
  };
  const a = supportAgent(options);
  const b = supportAgent(options);
  const outcomeA = a.invoke(user("charge"), { threadId }).then(
    () => null,
    (e: unknown) => e,
  );
  return { b, outcomeA };
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
      await pause(1_500); // past the lease and claimStaleAfterMs: only heartbeats keep it live
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
    // Ledger v1: a record of its own (v2: step-writes.test.ts holds the step write instead).
    const checkpointer = withoutStepWrites(new ObservedLedger());
    checkpointer.holdFirstRecord = true;
    const { charge, effects, second } = countedCharge();
    const { b, outcomeA: runA } = twoWorkers(charge, checkpointer, "t-slow-record", {
      claimStaleAfterMs: 200,
      stopPollIntervalMs: 20,
    });
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
    const { b, outcomeA: runA } = twoWorkers(charge, checkpointer, "t-skew", {
      claimStaleAfterMs: 1000,
      stopPollIntervalMs: 100,
    });
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
          leaseMs: 200,
          expectedAttempt: 1,
        },
      ]);
      const held = { key: "m-1:call_1", attempt: 2 };
      heartbeat = setInterval(
        () => void checkpointer.heartbeatCalls("t-handover", [held], 200),
        10,
      );
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
    const { b, outcomeA } = twoWorkers(slowCharge, checkpointer, "t-race", {
      stopPollIntervalMs: 10,
      claimStaleAfterMs: 300,
    });
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
    expect(await b.getToolLedger({ threadId: "t-race" })).toMatchObject([
      { key: "m-1:call_1", status: "completed", attempt: 1 },
    ]);
  });

  it("fences a superseded attempt: its late completion returns false and writes nothing", async () => {
    // Ledger v1: the late result is recorded on its own (v2 carries it in a step write, which
    // the taker's newer version refuses first).
    const checkpointer = withoutStepWrites(new RecordingCheckpointer());
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
    const a = supportAgent({ ...base, claimStaleAfterMs: 50 });
    const b = supportAgent({ ...base, claimStaleAfterMs: 50 });
    const runA = a.invoke(user("charge"), { threadId: "t-fence" });
    await entered.promise;
    await pause(80);
    const resultB = await b.invoke(null, { threadId: "t-fence" });
    gate.resolve();
    // Fenced out at its record, the late attempt fails out of its node: nothing of it is written.
    await expect(runA).rejects.toMatchObject({ code: "TOOL_CONFLICT_002" });

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
