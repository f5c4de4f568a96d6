/**
 * Ledger protocol v2 (model/README.md): the node's last result rides in the step's write, and
 * the claims of `retry` calls ride in the write of the step that issued them. These tests run
 * the real run loop on the in-memory store, which commits ledger writes with a checkpoint
 * (`commitStep`); the v1 paths are tested on a store without it (`withoutStepWrites`).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { StaleStateError } from "../errors/errors.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import type { StepCommit, StepWrite } from "../storage/checkpointer.js";
import type { AttemptRef, LedgerClaim } from "../storage/ledger-entry.js";
import { FaultPoints } from "../testing/fault-points.js";
import { tool } from "../tools/tool.js";
import {
  RecordingCheckpointer,
  callsTurn,
  deferred,
  freezeAt,
  pause,
  recordingLogger,
  supportAgent,
  testMeter,
  toolText,
  withoutHeartbeats,
} from "../support/helpers.js";
import type { FaultPointName } from "../node/fault-points.js";
import { supportTools, user, type S } from "../support/ledger-tools.js";

const oneCharge = callsTurn("m-1", [["charge_card", { order_id: "4821" }]]);

/** The real in-memory store, counting the ledger commits made outside step writes. */
class CountingStore extends RecordingCheckpointer {
  readonly claims: LedgerClaim[][] = [];
  readonly records: AttemptRef[] = [];
  override async claimCalls(threadId: string, claims: LedgerClaim[]) {
    this.claims.push(claims);
    return super.claimCalls(threadId, claims);
  }
  override async completeCall(threadId: string, attempt: AttemptRef, result: unknown) {
    this.records.push(attempt);
    return super.completeCall(threadId, attempt, result);
  }
}

/** A `fail` tool: after a crash in its window it must be reported, never run again. */
function payoutTool(effects: string[]) {
  return tool({
    name: "send_payout",
    description: "Pay the seller out.",
    schema: z.object({ order_id: z.string() }),
    onInDoubt: "fail",
    execute: (args) => {
      effects.push(`payout ${args.order_id}`);
      return `Paid out ${args.order_id}`;
    },
  });
}

/**
 * A process that dies at the `nth` write to `node` reaching `point`: its run freezes there for
 * good (a frozen process runs no cleanup, as a killed one), and its claims stop being renewed.
 */
function dyingAt(store: InMemoryCheckpointer, point: FaultPointName, node: string, nth = 1) {
  let seen = 0;
  const crash = freezeAt(point, (at) => at.node === node && ++seen === nth);
  return {
    options: { checkpointer: withoutHeartbeats(store), faultPoints: crash.faultPoints },
    crash,
  };
}

describe("ledger protocol v2: writes that ride in step writes", () => {
  it("commits a turn of one retry tool in its two step writes: no claim or record of its own", async () => {
    const store = new CountingStore();
    const effects: string[] = [];
    const app = supportAgent<S>({
      model: [oneCharge, "Charged."],
      tools: supportTools(effects),
      checkpointer: store,
    });
    const result = await app.invoke(user("charge"), { threadId: "t-one" });

    expect(result.status).toBe("completed");
    expect(effects).toEqual(["charge 4821"]);
    expect(store.claims).toEqual([]);
    expect(store.records).toEqual([]);
    // The model's step carries the claim, the tool's step the result.
    expect(store.ledgerWrites).toMatchObject([
      { claims: [{ key: "m-1:call_1", expectedAttempt: 0 }], completions: [] },
      { claims: [], completions: [{ attempt: { key: "m-1:call_1", attempt: 1 } }] },
    ]);
    expect(await app.getToolLedger({ threadId: "t-one" })).toMatchObject([
      { key: "m-1:call_1", status: "completed", attempt: 1, ownerRunId: result.runId },
    ]);
  });

  it("lets calls that return together ride in the step write; one that returns while a sibling runs is recorded on its own", async () => {
    const store = new CountingStore();
    const slowGate = deferred();
    const slow = tool({
      name: "slow_lookup",
      description: "A lookup that waits for the test.",
      schema: z.object({}),
      execute: async () => {
        await slowGate.promise;
        return "found";
      },
    });
    const model = [
      callsTurn("m-1", [
        ["lookup_order", { order_id: "1" }],
        ["charge_card", { order_id: "1" }],
        ["send_receipt", { order_id: "1" }],
      ]),
      callsTurn("m-2", [
        ["lookup_order", { order_id: "2" }],
        ["slow_lookup", {}],
      ]),
      "Done.",
    ];
    const app = supportAgent<S>({
      model,
      tools: [...supportTools([]), slow],
      checkpointer: store,
    });
    const run = app.invoke(user("go"), { threadId: "t-together" });
    await pause(50); // the second turn's quick lookup has returned and been recorded
    slowGate.resolve();
    await run;

    // Turn 1: three calls returning in one turn of the event loop, no record of their own.
    expect(store.ledgerWrites[1]?.completions.map((c) => c.attempt.key)).toEqual([
      "m-1:call_1",
      "m-1:call_2",
      "m-1:call_3",
    ]);
    // Turn 2: the quick call recorded as it returned, the slow one with the step.
    expect(store.records).toEqual([{ key: "m-2:call_1", attempt: 1 }]);
    expect(store.ledgerWrites[3]?.completions.map((c) => c.attempt.key)).toEqual(["m-2:call_2"]);
    expect(store.claims).toEqual([]);
  });

  it("keeps the started mark of a fail tool: claimed on its own before it runs", async () => {
    const store = new CountingStore();
    const effects: string[] = [];
    const app = supportAgent<S>({
      model: [
        callsTurn("m-1", [
          ["charge_card", { order_id: "1" }],
          ["send_payout", { order_id: "1" }],
        ]),
        "Done.",
      ],
      tools: [...supportTools(effects), payoutTool(effects)],
      checkpointer: store,
    });
    await app.invoke(user("go"), { threadId: "t-mixed" });

    expect(store.ledgerWrites[0]?.claims.map((c) => c.key)).toEqual(["m-1:call_1"]);
    expect(store.claims.map((batch) => batch.map((c) => c.key))).toEqual([["m-1:call_2"]]);
    expect([...effects].sort()).toEqual(["charge 1", "payout 1"]);
  });

  it("after a crash right after the model's step, runs a retry call once and never reports the fail call in doubt", async () => {
    const store = new InMemoryCheckpointer();
    const effects: string[] = [];
    const tools = [...supportTools(effects), payoutTool(effects)];
    const model = [
      callsTurn("m-1", [
        ["charge_card", { order_id: "1" }],
        ["send_payout", { order_id: "1" }],
      ]),
      "Done.",
    ];
    const dying = dyingAt(store, "step.after_write", "TOOL");
    const first = supportAgent<S>({ model, tools, claimStaleAfterMs: 60, ...dying.options });
    void first.invoke(user("go"), { threadId: "t-crash" }).catch(() => {});
    await dying.crash.reached;
    // The retry call's claim was written with the model's step; the fail call has none.
    expect(await first.getToolLedger({ threadId: "t-crash" })).toMatchObject([
      { key: "m-1:call_1", status: "started", attempt: 1 },
    ]);

    const metrics = testMeter();
    const logger = recordingLogger();
    const second = supportAgent<S>({
      model,
      tools,
      checkpointer: store,
      claimStaleAfterMs: 60,
      meter: metrics.meter,
      logger,
    });
    const result = await second.invoke(null, { threadId: "t-crash" });

    expect(result.status).toBe("completed");
    expect([...effects].sort()).toEqual(["charge 1", "payout 1"]);
    // The claim made ahead looks like a call that may have run: retry runs it, as attempt 2.
    expect(logger.find("warn", "IN DOUBT").map((r) => r.fields.key)).toEqual(["m-1:call_1"]);
    expect(await metrics.sum("tenxgraph.tool.in_doubt", { tool: "send_payout" })).toBe(0);
    expect(toolText(result.state, "call_2")).toBe("Paid out 1");
  });

  it("after a crash before the tool's step write, reports the riding call in doubt and retries it", async () => {
    const store = new InMemoryCheckpointer();
    const effects: string[] = [];
    // The tool step's write is the second write going to MAIN (the first is the start write).
    const dying = dyingAt(store, "step.before_write", "MAIN", 2);
    const first = supportAgent<S>({
      model: [oneCharge, "Charged."],
      tools: supportTools(effects),
      claimStaleAfterMs: 60,
      ...dying.options,
    });
    void first.invoke(user("charge"), { threadId: "t-ride" }).catch(() => {});
    await dying.crash.reached;
    expect(await first.getToolLedger({ threadId: "t-ride" })).toMatchObject([
      { key: "m-1:call_1", status: "started", attempt: 1 },
    ]);

    const logger = recordingLogger();
    const second = supportAgent<S>({
      model: [oneCharge, "Charged."],
      tools: supportTools(effects),
      checkpointer: store,
      claimStaleAfterMs: 60,
      logger,
    });
    const result = await second.invoke(null, { threadId: "t-ride" });

    // The window v2 moves, not widens: a crash between the tool's return and the commit that
    // records it leaves the call in doubt, and retry runs it again with the same key.
    expect(effects).toEqual(["charge 4821", "charge 4821"]);
    expect(logger.find("warn", "IN DOUBT")[0]?.fields).toMatchObject({
      key: "m-1:call_1",
      attempt: 1,
    });
    expect(await second.getToolLedger({ threadId: "t-ride" })).toMatchObject([
      { status: "completed", attempt: 2, ownerRunId: result.runId },
    ]);
  });

  it("refuses a riding result whose claim was taken over: the step write fails whole and nothing of it is written", async () => {
    /** Another execution takes the call over between the tool's return and the step write. */
    class TakenOverBeforeTheWrite extends InMemoryCheckpointer {
      override async commitStep(write: StepWrite): Promise<StepCommit> {
        for (const { attempt } of write.ledger.completions) {
          await this.claimCalls(write.threadId, [
            {
              key: attempt.key,
              toolName: "charge_card",
              ownerRunId: "run-taker",
              leaseMs: 60_000,
              expectedAttempt: attempt.attempt,
            },
          ]);
        }
        return super.commitStep(write);
      }
    }
    const store = new TakenOverBeforeTheWrite();
    const effects: string[] = [];
    const app = supportAgent<S>({
      model: [oneCharge, "Charged."],
      tools: supportTools(effects),
      checkpointer: store,
    });

    await expect(app.invoke(user("charge"), { threadId: "t-fenced" })).rejects.toMatchObject({
      code: "TOOL_CONFLICT_002",
    });
    const state = await app.getState({ threadId: "t-fenced" });
    expect(state?.values.messages.filter((m) => m.role === "tool")).toEqual([]);
    expect(await app.getToolLedger({ threadId: "t-fenced" })).toMatchObject([
      { status: "started", attempt: 2, ownerRunId: "run-taker" },
    ]);
  });

  it("records the riding result on its own when the step write fails, so a live run's call is not left in doubt", async () => {
    /** Another execution commits a version between this run's read and its tool step's write. */
    class ConflictOnTheToolStep extends InMemoryCheckpointer {
      override async commitStep(write: StepWrite): Promise<StepCommit> {
        if (write.ledger.completions.length > 0) {
          throw new StaleStateError(
            write.threadId,
            write.expectedVersion,
            write.expectedVersion + 1,
          );
        }
        return super.commitStep(write);
      }
    }
    const effects: string[] = [];
    const app = supportAgent<S>({
      model: [oneCharge, "Charged."],
      tools: supportTools(effects),
      checkpointer: new ConflictOnTheToolStep(),
    });
    await expect(app.invoke(user("charge"), { threadId: "t-stale" })).rejects.toMatchObject({
      code: "STORAGE_CONFLICT_001",
    });
    expect(await app.getToolLedger({ threadId: "t-stale" })).toMatchObject([
      { status: "completed", attempt: 1, result: { value: { content: "Charged order 4821" } } },
    ]);
  });

  it("keeps heartbeating a riding claim until its step write lands", async () => {
    const release = deferred();
    const writing = deferred();
    class SlowToolStep extends InMemoryCheckpointer {
      override async commitStep(write: StepWrite): Promise<StepCommit> {
        if (write.ledger.completions.length > 0) {
          writing.resolve();
          await release.promise;
        }
        return super.commitStep(write);
      }
    }
    const store = new SlowToolStep();
    const app = supportAgent<S>({
      model: [oneCharge, "Charged."],
      tools: supportTools([]),
      checkpointer: store,
      claimStaleAfterMs: 100,
    });
    const run = app.invoke(user("charge"), { threadId: "t-slow" });
    await writing.promise;
    await pause(300); // three leases
    const [entry] = await store.listCalls("t-slow");
    expect(entry?.status === "started" && entry.leaseExpiresInMs).toBeGreaterThan(0);
    release.resolve();
    expect((await run).status).toBe("completed");
  });

  it("hands back claims made ahead when the run stops before their node: not in doubt, run once on the next run", async () => {
    const store = new InMemoryCheckpointer();
    const effects: string[] = [];
    const model = [oneCharge, "Charged."];
    const stopAfterModelStep = new FaultPoints().arm(
      "step.after_write",
      async () => {
        await store.requestStop("t-stop"); // what app.stop() does

        await pause(100); // the run's watch sees the request
      },
      { when: (at) => at.node === "TOOL", times: 1 },
    );
    const app = supportAgent<S>({
      model,
      tools: supportTools(effects),
      checkpointer: store,
      faultPoints: stopAfterModelStep,
      stopPollIntervalMs: 10,
    });
    expect((await app.invoke(user("charge"), { threadId: "t-stop" })).status).toBe("stopped");
    expect(effects).toEqual([]);
    expect(await app.getToolLedger({ threadId: "t-stop" })).toMatchObject([
      { key: "m-1:call_1", status: "interrupted", attempt: 1 },
    ]);

    const logger = recordingLogger();
    const next = supportAgent<S>({
      model,
      tools: supportTools(effects),
      checkpointer: store,
      logger,
    });
    expect((await next.invoke(null, { threadId: "t-stop" })).status).toBe("completed");
    expect(effects).toEqual(["charge 4821"]);
    expect(logger.find("warn", "IN DOUBT")).toEqual([]);
  });

  it("with durableCheckpointEveryStep: false, records each result as its tool returns and claims nothing ahead", async () => {
    const store = new CountingStore();
    const app = supportAgent<S>({
      model: [oneCharge, "Charged."],
      tools: supportTools([]),
      checkpointer: store,
    });
    await app.invoke(user("charge"), { threadId: "t-cached", durableCheckpointEveryStep: false });
    expect(store.ledgerWrites).toEqual([]);
    expect(store.claims.map((batch) => batch.map((c) => c.key))).toContainEqual(["m-1:call_1"]);
    // (The run's lease, which such a run holds, is a ledger entry of its own.)
    const calls = store.records.filter(({ key }) => key === "m-1:call_1");
    expect(calls).toEqual([{ key: "m-1:call_1", attempt: 1 }]);
  });
});
