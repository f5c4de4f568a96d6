/**
 * SIGKILL in the window the ledger cannot close: charge_card returned (the card is charged) but
 * its result was not recorded (`tool.after_return`). The resumed process finds the call claimed
 * by a dead execution: in doubt. Each `onInDoubt` policy decides, and is reported.
 */
import type { Interrupt } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { SCENE_TEST_TIMEOUT_MS, type StoredThread } from "./support/crash-scene.js";
import { reconciledText } from "./support/support-agent.js";
import { checkInvariants } from "./support/thread-invariants.js";
import {
  CHARGE_KEY,
  CHARGE_LEDGER_KEY,
  ORDER,
  chargeAnswer,
  chargeEntry,
  crashInWindow,
  effectsAfterRetry,
  effectsByTool,
  expectDone,
  inDoubtWarnings,
  metric,
  seedScene,
  toolResults,
} from "./support/seed-scenario.js";

/** The siblings were killed wherever they were; under "retry" they settle as the crash left them. */
function expectSiblingsSettled(final: StoredThread, killed: StoredThread): void {
  const expected = effectsAfterRetry(killed);
  const actual = effectsByTool(final);
  expect(actual.lookup_order, "lookups").toBe(expected.lookup_order);
  expect(actual.send_receipt, "receipts").toBe(expected.send_receipt);
}

describe.each(STORES)("on $label", { timeout: SCENE_TEST_TIMEOUT_MS }, ({ kind }) => {
  describe.concurrent("killed between a tool's return and its record", () => {
    it('"retry" (the default) charges again, at attempt 2, and reports the call in doubt', async () => {
      const scene = seedScene("window-retry", kind);
      try {
        const killed = await crashInWindow(scene, "invoke", undefined);
        const resumed = await scene.run({ via: "invoke", input: { kind: "continue" } });
        expectDone(resumed, "completed");
        const final = await checkInvariants(scene, killed, { finished: true });
        // At least once: the documented cost of the window, and why a provider key is needed too.
        expect(
          final.effects.filter((e) => e.tool === "charge_card").map((e) => [e.key, e.attempt]),
        ).toEqual([
          [CHARGE_KEY, 1],
          [CHARGE_KEY, 2],
        ]);
        expect(chargeEntry(final)).toMatchObject({ status: "completed", attempt: 2 });
        expect(chargeAnswer(final)?.content).toBe(`Charged 42 USD for order ${ORDER}`);
        expect(metric(resumed, "tool.in_doubt", "charge_card"), "in-doubt counter").toBe(1);
        expect(inDoubtWarnings(resumed)).toMatchObject([{ level: "warn", policy: "retry" }]);
        expectSiblingsSettled(final, killed);
      } finally {
        await scene.dispose();
      }
    });

    it('"fail" tells the model the outcome is unknown and does not charge again', async () => {
      const scene = seedScene("window-fail", kind);
      const policies = { charge_card: "fail" } as const;
      try {
        const killed = await crashInWindow(scene, "stream", policies);
        const resumed = await scene.run({ via: "stream", input: { kind: "continue" }, policies });
        expectDone(resumed, "completed");
        const final = await checkInvariants(scene, killed, { finished: true });
        expect(effectsByTool(final).charge_card, "charges").toBe(1);
        expect(chargeEntry(final)).toMatchObject({ status: "completed", attempt: 2 });
        const answer = chargeAnswer(final);
        expect(answer?.isError).toBe(true);
        expect(answer?.content).toMatch(/^Tool 'charge_card' failed: \[TOOL_IN_DOUBT_001\] /);
        expect(toolResults(resumed, "charge_card")).toMatchObject([
          { replayed: false, isError: true },
        ]);
        expect(metric(resumed, "tool.in_doubt", "charge_card"), "in-doubt counter").toBe(1);
        expect(inDoubtWarnings(resumed)).toMatchObject([{ level: "warn", policy: "fail" }]);
        expectSiblingsSettled(final, killed);
      } finally {
        await scene.dispose();
      }
    });

    it("{ reconcile } asks the outside world and records its answer without charging again", async () => {
      const scene = seedScene("window-reconcile", kind);
      const policies = { charge_card: "reconcile" } as const;
      try {
        const killed = await crashInWindow(scene, "invoke", policies);
        const resumed = await scene.run({ via: "invoke", input: { kind: "continue" }, policies });
        expectDone(resumed, "completed");
        const final = await checkInvariants(scene, killed, { finished: true });
        expect(effectsByTool(final).charge_card, "charges").toBe(1);
        expect(chargeEntry(final)).toMatchObject({ status: "completed", attempt: 2 });
        expect(chargeAnswer(final)?.content).toBe(reconciledText("charge_card", 1));
        expect(chargeAnswer(final)?.isError).toBeFalsy();
        expect(inDoubtWarnings(resumed)).toMatchObject([{ level: "warn", policy: "reconcile" }]);
        expectSiblingsSettled(final, killed);
      } finally {
        await scene.dispose();
      }
    });
  });

  describe.concurrent('killed in the window, onInDoubt "interrupt"', () => {
    const policies = { charge_card: "interrupt" } as const;

    /** Continues the crashed run: it pauses on the in-doubt charge; returns the pending interrupt. */
    async function pauseOnDoubt(scene: ReturnType<typeof seedScene>, via: "invoke" | "stream") {
      const paused = await scene.run({ via, input: { kind: "continue" }, policies });
      const done = expectDone(paused, "interrupted");
      const interrupts = done.interrupts as Interrupt[];
      expect(interrupts).toMatchObject([
        {
          node: "TOOL",
          toolCallId: "call_2",
          value: {
            kind: "tool_in_doubt",
            tool: "charge_card",
            arguments: { order_id: ORDER, amount_cents: 4200 },
            key: CHARGE_LEDGER_KEY,
            attempt: 1,
          },
        },
      ]);
      expect(interrupts[0]!.id).toMatch(/:call_2:in-doubt-\d+$/);
      expect(metric(paused, "tool.in_doubt", "charge_card"), "in-doubt counter").toBe(1);
      expect(inDoubtWarnings(paused)).toMatchObject([{ level: "warn", policy: "interrupt" }]);
      return interrupts[0]!;
    }

    it('pauses for a human; { action: "complete" } records the answer, no second charge', async () => {
      const scene = seedScene("window-interrupt-complete", kind);
      try {
        const killed = await crashInWindow(scene, "invoke", policies);
        const pending = await pauseOnDoubt(scene, "invoke");
        const paused = await checkInvariants(scene, killed, { finished: false });
        expect(paused.checkpoint).toMatchObject({ status: "interrupted", currentNode: "TOOL" });
        expect(effectsByTool(paused).charge_card, "charges while paused").toBe(1);

        // A malformed answer is refused before it is stored: the thread stays paused.
        const typo = await scene.run({
          via: "invoke",
          input: { kind: "resume", answer: { action: "charged" } },
          policies,
        });
        expect(typo.messages.find((m) => m.type === "failed")?.code).toBe("RESUME_004");
        const still = await checkInvariants(scene, paused, { finished: false });
        expect(still.checkpoint?.version).toBe(paused.checkpoint?.version);

        const answer = { action: "complete", result: "human: the provider shows one charge" };
        const resumed = await scene.run({
          via: "invoke",
          input: { kind: "resume", answer, interruptId: pending.id },
          policies,
        });
        expectDone(resumed, "completed");
        const final = await checkInvariants(scene, still, { finished: true });
        expect(effectsByTool(final).charge_card, "charges").toBe(1);
        expect(chargeEntry(final)).toMatchObject({ status: "completed", attempt: 2 });
        expect(chargeAnswer(final)?.content).toBe("human: the provider shows one charge");
        expectSiblingsSettled(final, killed);
      } finally {
        await scene.dispose();
      }
    });

    it('{ action: "retry" } runs the charge again, through stream', async () => {
      const scene = seedScene("window-interrupt-retry", kind);
      try {
        const killed = await crashInWindow(scene, "stream", policies);
        await pauseOnDoubt(scene, "stream");
        const paused = await checkInvariants(scene, killed, { finished: false });
        const resumed = await scene.run({
          via: "stream",
          input: { kind: "resume", answer: { action: "retry" } },
          policies,
        });
        expectDone(resumed, "completed");
        const final = await checkInvariants(scene, paused, { finished: true });
        expect(final.effects.filter((e) => e.tool === "charge_card").map((e) => e.attempt)).toEqual(
          [1, 2],
        );
        expect(chargeEntry(final)).toMatchObject({ status: "completed", attempt: 2 });
        expect(toolResults(resumed, "charge_card")).toMatchObject([
          { replayed: false, isError: false },
        ]);
        expectSiblingsSettled(final, killed);
      } finally {
        await scene.dispose();
      }
    });
  });
});
