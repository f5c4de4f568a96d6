/**
 * The seed's timeline: three parallel calls; lookup_order and charge_card are done and recorded
 * while send_receipt hangs (the mailer never answers); the worker is SIGKILLed from outside. The
 * resumed process replays the two recorded calls and settles the hung one by its policy.
 */
import { describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { SCENE_TEST_TIMEOUT_MS } from "./support/crash-scene.js";
import type { WorkerMessage } from "../support/worker-process.js";
import type { ToolName } from "./support/agent-params.js";
import { countEffects } from "./support/side-effect-log.js";
import { reconciledText } from "./support/support-agent.js";
import { checkInvariants } from "./support/thread-invariants.js";
import {
  ORDER,
  SEED_REQUEST,
  chargeAnswer,
  chargeEntry,
  effectsByTool,
  expectDone,
  ledgerByTool,
  metric,
  seedScene,
  toolResults,
  resumeToEnd,
} from "./support/seed-scenario.js";

/** True once `hung` hangs and every other tool of the seed's message is recorded. */
function hungWithSiblingsRecorded(hung: ToolName) {
  return (messages: readonly WorkerMessage[]) => {
    const recorded = new Set(messages.filter((m) => m.type === "recorded").map((m) => m.tool));
    const others = (["lookup_order", "charge_card", "send_receipt"] as const).filter(
      (t) => t !== hung,
    );
    return (
      messages.some((m) => m.type === "hanging" && m.tool === hung) &&
      others.every((t) => recorded.has(t))
    );
  };
}

describe.each(STORES)("on $label", { timeout: SCENE_TEST_TIMEOUT_MS }, ({ kind }) => {
  describe.concurrent.each(["invoke", "stream"] as const)(
    "killed while a sibling tool hangs (%s)",
    (via) => {
      it("charges once and sends the receipt once after the resume", async () => {
        const scene = seedScene(`sibling-hang-${via}`, kind);
        try {
          const crashed = await scene.runAndKill(
            { via, input: { kind: "new", text: SEED_REQUEST }, hang: "send_receipt" },
            hungWithSiblingsRecorded("send_receipt"),
          );
          expect(crashed.exit.signal, crashed.stderr).toBe("SIGKILL");
          const killed = await checkInvariants(scene, null, { finished: false });
          expect(killed.checkpoint).toMatchObject({ status: "running", currentNode: "TOOL" });
          expect(ledgerByTool(killed), "ledger at the kill").toEqual({
            lookup_order: ["completed", 1],
            charge_card: ["completed", 1],
            send_receipt: ["started", 1],
          });
          expect(effectsByTool(killed)).toEqual({
            lookup_order: 1,
            charge_card: 1,
            send_receipt: 0,
          });

          const { resumed, final } = await resumeToEnd(scene, via, killed);
          expect(effectsByTool(final)).toEqual({
            lookup_order: 1,
            charge_card: 1,
            send_receipt: 1,
          });
          expect(ledgerByTool(final), "ledger after the resume").toEqual({
            lookup_order: ["completed", 1],
            charge_card: ["completed", 1],
            send_receipt: ["completed", 2],
          });
          expect(metric(resumed, "tool.ledger_hits", "charge_card"), "charge replayed").toBe(1);
          expect(metric(resumed, "tool.ledger_hits", "lookup_order"), "lookup replayed").toBe(1);
          expect(metric(resumed, "tool.in_doubt", "send_receipt"), "receipt in doubt").toBe(1);
          if (via === "stream") {
            expect(toolResults(resumed, "charge_card")).toMatchObject([{ replayed: true }]);
            expect(toolResults(resumed, "send_receipt")).toMatchObject([{ replayed: false }]);
          }
        } finally {
          await scene.dispose();
        }
      });
    },
  );

  describe.concurrent("a fresh process started before the hung worker is killed", () => {
    it("waits on the hung call's live claim, then takes it over once its holder is dead", async () => {
      const scene = seedScene("sibling-hang-takeover", kind);
      try {
        // A generous lease keeps the holder, slowed by a loaded machine, from looking dead: the
        // holder's own lease is what every reader honours.
        // One wave: the two runs overlap on the thread, so their writes are checked together.
        const hung = scene.start(
          {
            via: "invoke",
            input: { kind: "new", text: SEED_REQUEST },
            hang: "send_receipt",
            claimStaleAfterMs: 2_000,
          },
          "takeover",
        );
        const ready = hungWithSiblingsRecorded("send_receipt");
        await hung.worker.waitFor(() => ready(hung.worker.messages), 30_000);
        // The holder still heartbeats its claim: the new run must wait, not run the call twice.
        const next = scene.start(
          { via: "stream", input: { kind: "continue" }, claimStaleAfterMs: 2_000 },
          "takeover",
        );
        const waiting = await next.worker.waitFor(
          (m) => m.type === "log" && String(m.msg).includes("held by another execution"),
          30_000,
        );
        expect(waiting.tool).toBe("send_receipt");
        expect(countEffects(scene.effectsPath, "send_receipt"), "receipts while held").toBe(0);
        await hung.worker.kill();
        expect((await hung.finished).exit.signal).toBe("SIGKILL");

        const resumed = await next.finished;
        expectDone(resumed, "completed");
        const final = await checkInvariants(scene, null, { finished: true });
        expect(effectsByTool(final)).toEqual({ lookup_order: 1, charge_card: 1, send_receipt: 1 });
        expect(ledgerByTool(final).send_receipt, "taken over at attempt 2").toEqual([
          "completed",
          2,
        ]);
        expect(metric(resumed, "tool.in_doubt", "send_receipt"), "receipt in doubt").toBe(1);
        expect(toolResults(resumed, "charge_card")).toMatchObject([{ replayed: true }]);
      } finally {
        await scene.dispose();
      }
    });
  });

  describe.concurrent("killed while the charge itself hangs, before it acted", () => {
    it("{ reconcile } finds no charge outside, so the charge runs once, at attempt 2", async () => {
      const scene = seedScene("charge-hang-reconcile", kind);
      const policies = { charge_card: "reconcile" } as const;
      try {
        const crashed = await scene.runAndKill(
          {
            via: "invoke",
            input: { kind: "new", text: SEED_REQUEST },
            hang: "charge_card",
            policies,
          },
          hungWithSiblingsRecorded("charge_card"),
        );
        expect(crashed.exit.signal, crashed.stderr).toBe("SIGKILL");
        const killed = await checkInvariants(scene, null, { finished: false });
        expect(chargeEntry(killed)).toMatchObject({ status: "started", attempt: 1 });
        expect(effectsByTool(killed).charge_card).toBe(0);

        const { final } = await resumeToEnd(scene, "invoke", killed, policies);
        expect(effectsByTool(final)).toEqual({ lookup_order: 1, charge_card: 1, send_receipt: 1 });
        expect(final.effects.find((e) => e.tool === "charge_card")?.attempt).toBe(2);
        expect(chargeEntry(final)).toMatchObject({ status: "completed", attempt: 2 });
        expect(chargeAnswer(final)?.content).toBe(`Charged 42 USD for order ${ORDER}`);
        expect(chargeAnswer(final)?.content).not.toBe(reconciledText("charge_card", 1));
      } finally {
        await scene.dispose();
      }
    });
  });
});
