/**
 * SIGKILL around an `interrupt()` pause: charge_card asks for approval before it charges, while
 * its siblings finish. The pause must survive the death of the process that paused, of the
 * process about to write the pause, and of the process that resumed it with the answer.
 */
import type { Interrupt } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import type { AgentParams } from "./support/agent-params.js";
import {
  SCENE_TEST_TIMEOUT_MS,
  type CrashScene,
  type StoredThread,
} from "./support/crash-scene.js";
import { checkInvariants } from "./support/thread-invariants.js";
import {
  ORDER,
  SEED_REQUEST,
  chargeAnswer,
  effectsByTool,
  expectDone,
  expectSelfKilled,
  ledgerByTool,
  seedScene,
} from "./support/seed-scenario.js";

const START = { input: { kind: "new", text: SEED_REQUEST }, approval: true } as const;
const APPROVED = { kind: "resume", answer: { approved: true } } as const;
const ONCE_EACH = { lookup_order: 1, charge_card: 1, send_receipt: 1 };

/** The thread as the pause left it: waiting for approval of the charge, which has not happened. */
async function expectPaused(scene: CrashScene, previous: StoredThread | null) {
  const paused = await checkInvariants(scene, previous, { finished: false });
  expect(paused.checkpoint).toMatchObject({ status: "interrupted", currentNode: "TOOL" });
  const [pending, ...more] = paused.checkpoint!.interrupts as Interrupt[];
  expect(more, "one pending interrupt").toEqual([]);
  const issuer = paused.messages.find((m) => m.role === "assistant")!;
  expect(pending).toMatchObject({
    id: `${issuer.id}:call_2`, // derived from the tool call, so stable across processes
    node: "TOOL",
    toolCallId: "call_2",
    message: `Charge order ${ORDER}?`,
    value: { order_id: ORDER, amount_cents: 4200 },
  });
  expect(ledgerByTool(paused).charge_card?.[0], "a paused call is not in doubt").toBe(
    "interrupted",
  );
  expect(effectsByTool(paused).charge_card, "no charge before the approval").toBe(0);
  return paused;
}

/**
 * Resumes with the approval in a fresh process and checks the thread completed: one of each,
 * and `receipts` receipts (2 when a kill took the receipt's result, riding in the pause's
 * write: in doubt, and retried).
 */
async function approveAndFinish(
  scene: CrashScene,
  via: AgentParams["via"],
  before: StoredThread,
  receipts = 1,
) {
  const resumed = await scene.run({ via, input: APPROVED, approval: true });
  expectDone(resumed, "completed");
  const final = await checkInvariants(scene, before, { finished: true });
  expect(effectsByTool(final)).toEqual({ ...ONCE_EACH, send_receipt: receipts });
  expect(chargeAnswer(final)?.content).toBe(`Charged 42 USD for order ${ORDER}`);
  return final;
}

describe.each(STORES)("on $label", { timeout: SCENE_TEST_TIMEOUT_MS }, ({ kind }) => {
  describe.concurrent("killed around an interrupt() pause", () => {
    it("while paused (invoke): the pause is durable and a fresh process resumes it", async () => {
      const scene = seedScene("pause-idle", kind);
      try {
        const pausing = await scene.runAndKill({ via: "invoke", ...START, stayAlive: true }, (m) =>
          m.some((x) => x.type === "idle"),
        );
        expect(pausing.exit.signal).toBe("SIGKILL");
        expect(pausing.done?.status, "the run paused before the kill").toBe("interrupted");
        const paused = await expectPaused(scene, null);
        const final = await approveAndFinish(scene, "invoke", paused);
        // Claimed again on resume: attempt 2 of a call that ran once.
        expect(ledgerByTool(final).charge_card).toEqual(["completed", 2]);
      } finally {
        await scene.dispose();
      }
    });

    it("before the pause was written (stream): continuing pauses again, then the answer charges once", async () => {
      const scene = seedScene("pause-unwritten", kind);
      try {
        const crashed = await scene.run({
          via: "stream",
          ...START,
          kill: { point: "step.before_write", hit: 3 }, // start, after MAIN, the pause
        });
        expectSelfKilled(crashed, "step.before_write");
        const killed = await checkInvariants(scene, null, { finished: false });
        expect(killed.checkpoint).toMatchObject({ status: "running", currentNode: "TOOL" });
        expect(killed.checkpoint?.interrupts).toEqual([]);

        const again = await scene.run({
          via: "stream",
          input: { kind: "continue" },
          approval: true,
        });
        expectDone(again, "interrupted");
        const paused = await expectPaused(scene, killed);
        // The receipt, returning last, rode in the pause's write, which the kill took: it was
        // in doubt, and its policy (retry) ran it again. The lookup was recorded on its own.
        expect(ledgerByTool(paused)).toMatchObject({
          lookup_order: ["completed", 1],
          send_receipt: ["completed", 2],
        });
        await approveAndFinish(scene, "stream", paused, 2);
      } finally {
        await scene.dispose();
      }
    });

    it("while the approved charge hangs in the resuming process: the stored answer is reused", async () => {
      const scene = seedScene("pause-answer-kept", kind);
      try {
        expectDone(await scene.run({ via: "invoke", ...START }), "interrupted");
        const paused = await expectPaused(scene, null);
        const crashed = await scene.runAndKill(
          { via: "invoke", input: APPROVED, approval: true, hang: "charge_card" },
          (m) => m.some((x) => x.type === "hanging"),
        );
        expect(crashed.exit.signal).toBe("SIGKILL");
        const killed = await checkInvariants(scene, paused, { finished: false });
        expect(killed.checkpoint).toMatchObject({ status: "running", currentNode: "TOOL" });

        // Continue, not resume: the answer was stored by the resume's first write. Were it lost,
        // the charge would pause again instead of running.
        const continued = await scene.run({
          via: "invoke",
          input: { kind: "continue" },
          approval: true,
        });
        expectDone(continued, "completed");
        const final = await checkInvariants(scene, killed, { finished: true });
        expect(effectsByTool(final)).toEqual(ONCE_EACH);
        expect(ledgerByTool(final).charge_card).toEqual(["completed", 3]);
      } finally {
        await scene.dispose();
      }
    });
  });
});
