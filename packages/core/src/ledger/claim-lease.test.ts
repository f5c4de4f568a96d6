import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import {
  callsTurn,
  collectEvents,
  deferred,
  LedgerReadsCheckpointer,
  ofType,
  supportAgent,
  toolText,
  untilAborted,
  withoutStepWrites,
} from "../support/helpers.js";
import { tool } from "../tools/tool.js";
import { FaultPoints } from "../testing/fault-points.js";
import type { AttemptRef, LedgerClaim } from "../storage/ledger-entry.js";
import { user } from "../support/ledger-tools.js";
import { testTracer } from "../support/test-tracer.js";

/**
 * The real in-memory store, whose heartbeats can be frozen: while `frozen`, a heartbeat renews
 * nothing and reports nothing, as when its process is stopped (SIGSTOP, a long GC pause).
 * `heartbeatsFromNow(n)` resolves once `n` more heartbeats were asked for.
 */
class FreezableHeartbeats extends LedgerReadsCheckpointer {
  frozen = false;
  #beats = 0;
  #waiters: { at: number; resolve: () => void }[] = [];

  heartbeatsFromNow(n: number): Promise<void> {
    const waiter = deferred();
    this.#waiters.push({ at: this.#beats + n, resolve: waiter.resolve });
    return waiter.promise;
  }

  override async heartbeatCalls(threadId: string, attempts: AttemptRef[], leaseMs: number) {
    this.#beats += 1;
    for (const waiter of this.#waiters) if (this.#beats >= waiter.at) waiter.resolve();
    if (this.frozen) return [];
    return super.heartbeatCalls(threadId, attempts, leaseMs);
  }
}

/** {@link FreezableHeartbeats} that can hold the next claim until a promise settles. */
class ClaimGate extends FreezableHeartbeats {
  holdNextClaim: Promise<void> | undefined;
  readonly claimWaiting = deferred();

  override async claimCalls(threadId: string, claims: LedgerClaim[]) {
    const hold = this.holdNextClaim;
    this.holdNextClaim = undefined;
    if (hold) {
      this.claimWaiting.resolve();
      await hold;
    }
    return super.claimCalls(threadId, claims);
  }
}

/**
 * charge_card whose first attempt hangs: until `gate` opens, or (without a gate) until its
 * signal aborts, whose reason lands in `abortReason`. Every attempt that starts is in `effects`.
 */
function chargeWithHangingFirstAttempt(gate?: Promise<void>) {
  const effects: string[] = [];
  const entered = deferred();
  const second = deferred();
  const abortReason = deferred<unknown>();
  const charge = tool({
    name: "charge_card",
    description: "Charge the card.",
    schema: z.object({ order_id: z.string() }),
    execute: async (args, ctx) => {
      effects.push(`charge ${args.order_id} attempt ${ctx.attempt}`);
      if (effects.length > 1) {
        second.resolve();
        return `Charged order ${args.order_id} (attempt ${ctx.attempt})`;
      }
      entered.resolve();
      if (gate) await gate;
      else {
        ctx.signal.addEventListener("abort", () => abortReason.resolve(ctx.signal.reason));
        await untilAborted(ctx.signal);
      }
      return `Charged order ${args.order_id} (attempt ${ctx.attempt})`;
    },
  });
  return { charge, effects, entered, second, abortReason };
}

const model = () => [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "Done."];

describe("claim leases: each worker's claimStaleAfterMs is its own lease, honoured by every reader", () => {
  it("a live claim with a long lease and a slow heartbeat is waited on by a worker whose own lease is short", async () => {
    const checkpointer = new LedgerReadsCheckpointer();
    const gate = deferred();
    const { charge, effects, entered, second } = chargeWithHangingFirstAttempt(gate.promise);
    const slow = supportAgent({
      model: model(),
      tools: [charge],
      checkpointer,
      stopPollIntervalMs: 1000,
      claimStaleAfterMs: 4000,
    });
    const fast = supportAgent({
      model: model(),
      tools: [charge],
      checkpointer,
      stopPollIntervalMs: 50,
      claimStaleAfterMs: 150,
    });
    const runSlow = slow.invoke(user("charge"), { threadId: "t-lease" }).then(
      () => null,
      (e: unknown) => e,
    );
    await entered.promise;
    const runFast = collectEvents(fast.stream(null, { threadId: "t-lease" }));
    // Eight polls of the fast worker (100 ms apart) are far past its own 150 ms, and well
    // within the slow worker's 4 s lease, which its heartbeat (every second) keeps renewing.
    await Promise.race([checkpointer.readsFromNow(8), second.promise]);
    gate.resolve();

    const { events } = await runFast;
    expect(effects).toEqual(["charge 4821 attempt 1"]);
    expect(ofType(events, "tool_result")[0]).toMatchObject({ replayed: true, isError: false });
    expect(ofType(events, "run_end")[0]?.status).toBe("completed");
    expect(await runSlow).toMatchObject({ code: "STORAGE_CONFLICT_001" });
    expect(await fast.getToolLedger({ threadId: "t-lease" })).toMatchObject([
      { key: "m-1:call_1", status: "completed", attempt: 1 },
    ]);
  });

  it("a dead claim is taken over once its own lease expired, even by a worker whose lease is longer", async () => {
    const checkpointer = new FreezableHeartbeats();
    checkpointer.frozen = true;
    const gate = deferred();
    const { charge, effects, entered } = chargeWithHangingFirstAttempt(gate.promise);
    const frozen = supportAgent({
      model: model(),
      tools: [charge],
      checkpointer,
      claimStaleAfterMs: 100,
    });
    const patient = supportAgent({
      model: model(),
      tools: [charge],
      checkpointer,
      claimStaleAfterMs: 5000,
    });
    const runFrozen = frozen.invoke(user("charge"), { threadId: "t-dead" }).then(
      () => null,
      (e: unknown) => e,
    );
    await entered.promise;

    const run = patient.invoke(null, { threadId: "t-dead" });
    // The frozen claim's 100 ms lease is over by the patient worker's second poll (100 ms
    // apart); under the patient worker's own 5 s it would still be waiting at its tenth.
    const first = await Promise.race([
      run.then(() => "taken over"),
      checkpointer.readsFromNow(10).then(() => "still waiting"),
    ]);
    expect(first).toBe("taken over");
    const result = await run;
    expect(effects).toEqual(["charge 4821 attempt 1", "charge 4821 attempt 2"]);
    expect(toolText(result.state, "call_1")).toBe("Charged order 4821 (attempt 2)");
    // The frozen process wakes up late. Its result rides in its step write, which is refused:
    // the taker has written since (and the result's claim is the taker's, so it is not
    // recorded on its own either).
    gate.resolve();
    expect(await runFrozen).toMatchObject({ code: "STORAGE_CONFLICT_001" });
    expect(await patient.getToolLedger({ threadId: "t-dead" })).toMatchObject([
      { status: "completed", attempt: 2 },
    ]);
  });

  it("a worker with a short lease waits out a dead holder's longer lease instead of giving up at its own deadline", async () => {
    const checkpointer = new FreezableHeartbeats();
    checkpointer.frozen = true;
    const gate = deferred();
    const { charge, effects, entered } = chargeWithHangingFirstAttempt(gate.promise);
    const options = { model: model(), tools: [charge], checkpointer };
    const holder = supportAgent({ ...options, claimStaleAfterMs: 600 });
    const waiter = supportAgent({ ...options, claimStaleAfterMs: 100 });
    const runHolder = holder.invoke(user("charge"), { threadId: "t-outwait" }).then(
      () => null,
      (e: unknown) => e,
    );
    await entered.promise;

    // Past its 0.3 s tool deadline plus its own 100 ms lease, the waiter would have given up
    // with TOOL_CONFLICT_001 while the holder's 600 ms lease still ran.
    const result = await waiter.invoke(null, { threadId: "t-outwait", toolTimeout: 0.3 });
    expect(toolText(result.state, "call_1")).toBe("Charged order 4821 (attempt 2)");
    expect(effects).toEqual(["charge 4821 attempt 1", "charge 4821 attempt 2"]);
    gate.resolve();
    // Its step write, carrying its result, is refused: the waiter has written since.
    expect(await runHolder).toMatchObject({ code: "STORAGE_CONFLICT_001" });
  });

  it("a zombie's next heartbeat finds its claim taken over and aborts its tool's signal; nothing it does is recorded", async () => {
    const checkpointer = new FreezableHeartbeats();
    checkpointer.frozen = true;
    const { charge, effects, entered, abortReason } = chargeWithHangingFirstAttempt();
    const options = { model: model(), tools: [charge], checkpointer };
    // The zombie's spans: its call's span says it was fenced.
    const zombieSpans = testTracer();
    const zombie = supportAgent({
      ...options,
      stopPollIntervalMs: 20,
      claimStaleAfterMs: 100,
      tracing: { tracer: zombieSpans.tracer },
    });
    const taker = supportAgent({ ...options, claimStaleAfterMs: 100 });
    const runZombie = zombie.invoke(user("charge"), { threadId: "t-zombie" }).then(
      () => null,
      (e: unknown) => e,
    );
    await entered.promise;
    const taken = await taker.invoke(null, { threadId: "t-zombie" });
    expect(toolText(taken.state, "call_1")).toBe("Charged order 4821 (attempt 2)");

    // The zombie wakes up: its next heartbeat reports attempt 1 as no longer held.
    checkpointer.frozen = false;
    const aborted = abortReason.promise.then((reason) => ({ reason }));
    const outcome = await Promise.race([aborted, checkpointer.heartbeatsFromNow(3)]);
    expect(outcome, "the zombie tool's signal was aborted").toBeDefined();
    const reason = (outcome as { reason: unknown }).reason;
    expect(isTenxgraphError(reason) && reason.code).toBe("TOOL_CONFLICT_002");
    expect(String((reason as Error).message)).toContain("taken over");

    expect(await runZombie).toMatchObject({ code: "TOOL_CONFLICT_002" });
    expect(effects).toEqual(["charge 4821 attempt 1", "charge 4821 attempt 2"]);
    // Fenced: attempt 1 can no longer record anything; the taker's result stands.
    const late = await checkpointer.completeCall(
      "t-zombie",
      { key: "m-1:call_1", attempt: 1 },
      "late",
    );
    expect(late).toBe(false);
    expect(await taker.getToolLedger({ threadId: "t-zombie" })).toMatchObject([
      { key: "m-1:call_1", status: "completed", attempt: 2, ownerRunId: taken.runId },
    ]);
    expect((await taker.getState({ threadId: "t-zombie" }))?.status).toBe("completed");
    expect(zombieSpans.span("execute_tool charge_card").attributes).toMatchObject({
      "tenxgraph.tool.attempt": 1,
      "tenxgraph.tool.outcome": "fenced",
      "error.type": "TOOL_CONFLICT_002",
    });
  });

  it("a zombie whose completion is fenced out fails out of its node, even when its step write would still commit", async () => {
    // Heartbeats stay frozen, so only the fenced completion can tell the zombie it lost.
    // Ledger v1: the zombie's record of its own (v2's riding result: step-writes.test.ts).
    const checkpointer = withoutStepWrites(new ClaimGate());
    checkpointer.frozen = true;
    const zombieGate = deferred();
    const zombieEntered = deferred();
    const effects: string[] = [];
    const charge = tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: z.object({ order_id: z.string() }),
      execute: async (args, ctx) => {
        effects.push(`charge ${args.order_id} attempt ${ctx.attempt}`);
        if (ctx.attempt === 1) {
          zombieEntered.resolve();
          await zombieGate.promise;
        }
        return `Charged order ${args.order_id} (attempt ${ctx.attempt})`;
      },
    });
    const options = { model: model(), tools: [charge], checkpointer, claimStaleAfterMs: 100 };
    // A first run dies right after the model step's write: the thread waits at TOOL.
    const crash = new FaultPoints().arm(
      "step.after_write",
      () => {
        throw new Error("crash after the model step");
      },
      { when: (at) => at.node === "TOOL", times: 1 },
    );
    await supportAgent({ ...options, faultPoints: crash })
      .invoke(user("charge"), { threadId: "t-fenced" })
      .catch(() => null);

    // The taker starts first (its start write is the older version) and is held before its
    // claim; the zombie starts second, holding the newer version, claims and hangs.
    const claimHeld = deferred();
    checkpointer.holdNextClaim = claimHeld.promise;
    const runTaker = supportAgent(options)
      .invoke(null, { threadId: "t-fenced" })
      .then(
        () => null,
        (e: unknown) => e,
      );
    await checkpointer.claimWaiting.promise;
    const runZombie = supportAgent(options)
      .invoke(null, { threadId: "t-fenced" })
      .then(
        () => null,
        (e: unknown) => e,
      );
    await zombieEntered.promise;

    // The taker takes the expired claim over, charges as attempt 2, records it, and loses its
    // step write to the zombie's newer version.
    claimHeld.resolve();
    expect(await runTaker).toMatchObject({ code: "STORAGE_CONFLICT_001" });
    // The zombie wakes: its record is refused, and with it the node. Going on, it would have
    // committed attempt 1's result while the ledger holds attempt 2's.
    zombieGate.resolve();
    expect(await runZombie).toMatchObject({ code: "TOOL_CONFLICT_002" });
    expect(effects).toEqual(["charge 4821 attempt 1", "charge 4821 attempt 2"]);

    const done = await supportAgent(options).invoke(null, { threadId: "t-fenced" });
    expect(toolText(done.state, "call_1")).toBe("Charged order 4821 (attempt 2)");
    expect(effects).toHaveLength(2);
  });
});
