/**
 * SIGKILL right after a tool returned and its result was recorded (`ledger.after_record`), in
 * the middle of the tool node: the resumed process replays the recorded call from the ledger.
 */
import { describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { SCENE_TEST_TIMEOUT_MS } from "./support/crash-scene.js";
import {
  CHARGE_LEDGER_KEY,
  crashSeedRun,
  effectsAfterRetry,
  effectsByTool,
  metric,
  seedScene,
  toolResults,
  resumeToEnd,
} from "./support/seed-scenario.js";

describe.each(STORES)("on $label", { timeout: SCENE_TEST_TIMEOUT_MS }, ({ kind }) => {
  describe.concurrent.each(["invoke", "stream"] as const)(
    "killed after a recorded tool call (%s)",
    (via) => {
      it("replays the recorded charge in a fresh process instead of charging again", async () => {
        const scene = seedScene(`after-record-${via}`, kind);
        try {
          const killed = await crashSeedRun(scene, via, {
            point: "ledger.after_record",
            tool: "charge_card",
          });
          expect(killed.checkpoint).toMatchObject({ status: "running", currentNode: "TOOL" });
          expect(killed.ledger.find((e) => e.key === CHARGE_LEDGER_KEY)).toMatchObject({
            status: "completed",
            attempt: 1,
          });
          expect(effectsByTool(killed).charge_card).toBe(1);

          const { resumed, final } = await resumeToEnd(scene, via, killed);
          expect(effectsByTool(final)).toEqual(effectsAfterRetry(killed));
          expect(effectsByTool(final).charge_card, "charges").toBe(1);
          expect(final.ledger.find((e) => e.key === CHARGE_LEDGER_KEY)?.attempt).toBe(1);
          expect(metric(resumed, "tool.ledger_hits", "charge_card"), "replays of the charge").toBe(
            1,
          );
          if (via === "stream") {
            expect(toolResults(resumed, "charge_card")).toMatchObject([
              { replayed: true, isError: false },
            ]);
          }
        } finally {
          await scene.dispose();
        }
      });
    },
  );
});
