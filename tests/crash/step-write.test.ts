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
  effectsAfterRetry,
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
      it("before the write: the calls recorded on their own replay; those riding in the write are in doubt and retried", async () => {
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
          // The lookup and the charge returned earlier (0 and 50 ms into the node), each while
          // a sibling still ran, so each was recorded on its own; only a machine that stalls
          // this process past those gaps sees them return in the receipt's turn, and then they
          // ride too. Either way a call is completed exactly when it was recorded.
          const ledger = ledgerByTool(killed);
          expect(ledger.send_receipt).toEqual(["started", 1]);
          const recordedAlone = (["lookup_order", "charge_card"] as const).filter(
            (tool) => ledger[tool]?.[0] === "completed",
          );
          for (const tool of ["lookup_order", "charge_card"] as const) {
            expect(ledger[tool], tool).toEqual([
              recordedAlone.includes(tool) ? "completed" : "started",
              1,
            ]);
          }
          expect(effectsByTool(killed)).toEqual(ONCE_EACH);

          const { resumed, final } = await resumeToEnd(scene, via, killed);
          // Recorded calls replay; every call whose result rode in the lost write is in doubt
          // and runs once more under the default `retry`.
          expect(effectsByTool(final)).toEqual(effectsAfterRetry(killed));
          expect(effectsByTool(final).send_receipt).toBe(2);
          for (const tool of TOOLS) {
            const recorded = recordedAlone.includes(tool as (typeof recordedAlone)[number]);
            expect(ledgerByTool(final)[tool], tool).toEqual(["completed", recorded ? 1 : 2]);
            expect(metric(resumed, "tool.ledger_hits", tool), `${tool} replayed`).toBe(
              recorded ? 1 : 0,
            );
            expect(metric(resumed, "tool.in_doubt", tool), `${tool} in doubt`).toBe(
              recorded ? 0 : 1,
            );
            if (via === "stream" && recorded) {
              expect(toolResults(resumed, tool)).toMatchObject([{ replayed: true }]);
            }
          }
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
