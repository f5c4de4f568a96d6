/**
 * SIGKILL around the tool step's durable write: after the node's calls returned but before the
 * step's write (`step.before_write`), and just after that write committed (`step.after_write`).
 * The first resumes at the tool node: the two calls recorded on their own replay from the
 * ledger, and the receipt, whose result rode in the lost write (ledger protocol v2), is in doubt
 * and retried. The second resumes at the model and touches no tool.
 */
import { describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { SCENE_TEST_TIMEOUT_MS } from "./support/crash-scene.js";
import {
  crashSeedRun,
  TOOLS,
  effectsByTool,
  ledgerByTool,
  metric,
  seedScene,
  toolResults,
  resumeToEnd,
} from "./support/seed-scenario.js";

/** The tool step's write is the run's third: the start write, after MAIN, after TOOL. */
const TOOL_STEP_WRITE = 3;
const ALL_RECORDED = {
  lookup_order: ["completed", 1],
  charge_card: ["completed", 1],
  send_receipt: ["completed", 1],
};
const ONCE_EACH = { lookup_order: 1, charge_card: 1, send_receipt: 1 };

describe.each(STORES)("on $label", { timeout: SCENE_TEST_TIMEOUT_MS }, ({ kind }) => {
  describe.concurrent.each(["invoke", "stream"] as const)(
    "killed around the tool step's write (%s)",
    (via) => {
      it("before the write: the calls recorded on their own replay; the one riding in the write is in doubt and retried", async () => {
        const scene = seedScene(`before-write-${via}`, kind);
        try {
          const killed = await crashSeedRun(scene, via, {
            point: "step.before_write",
            hit: TOOL_STEP_WRITE,
          });
          // The step's results exist only in the ledger: the thread still stands at the tool node.
          expect(killed.checkpoint).toMatchObject({
            version: 2,
            status: "running",
            currentNode: "TOOL",
          });
          expect(killed.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
          // The receipt returned last: its result rode in the write the kill took (ledger v2).
          expect(ledgerByTool(killed)).toEqual({ ...ALL_RECORDED, send_receipt: ["started", 1] });
          expect(effectsByTool(killed)).toEqual(ONCE_EACH);

          const { resumed, final } = await resumeToEnd(scene, via, killed);
          expect(effectsByTool(final)).toEqual({ ...ONCE_EACH, send_receipt: 2 });
          expect(ledgerByTool(final)).toEqual({ ...ALL_RECORDED, send_receipt: ["completed", 2] });
          for (const tool of ["lookup_order", "charge_card"] as const) {
            expect(metric(resumed, "tool.ledger_hits", tool), `${tool} replayed`).toBe(1);
            if (via === "stream")
              expect(toolResults(resumed, tool)).toMatchObject([{ replayed: true }]);
          }
          expect(metric(resumed, "tool.in_doubt", "send_receipt"), "receipt in doubt").toBe(1);
          expect(final.messages.map((m) => m.role)).toEqual([
            "user",
            "assistant",
            "tool",
            "tool",
            "tool",
            "assistant",
          ]);
        } finally {
          await scene.dispose();
        }
      });

      it("after the write: the resumed run goes on at the model and runs no tool", async () => {
        const scene = seedScene(`after-write-${via}`, kind);
        try {
          const killed = await crashSeedRun(scene, via, {
            point: "step.after_write",
            hit: TOOL_STEP_WRITE,
          });
          expect(killed.checkpoint).toMatchObject({
            version: 3,
            status: "running",
            currentNode: "MAIN",
          });
          expect(killed.messages.filter((m) => m.role === "tool")).toHaveLength(3);

          const { resumed, final } = await resumeToEnd(scene, via, killed);
          expect(effectsByTool(final)).toEqual(ONCE_EACH);
          expect(ledgerByTool(final)).toEqual(ALL_RECORDED);
          for (const tool of TOOLS) {
            expect(metric(resumed, "tool.ledger_hits", tool), `${tool} replayed`).toBe(0);
          }
          expect(final.checkpoint?.version, "start write + model step").toBe(5);
        } finally {
          await scene.dispose();
        }
      });
    },
  );
});
