/**
 * The trace of a run continued after a SIGKILL. A worker process dies in the window the ledger
 * cannot close (charge_card returned, its result not recorded); this process continues the run
 * under an SDK tracer exporting to memory (the dead worker could export nothing). Its spans show
 * what ran again, what was replayed from the ledger, and what was found in doubt.
 */
import { silentLogger } from "@tenxgraph/core";
import { FaultPoints } from "@tenxgraph/core/testing";
import { describe, expect, it } from "vitest";
import { spanTree, testTracer } from "../../packages/core/src/support/test-tracer.js";
import { openStore } from "../support/store-spec.js";
import { SCENE_TEST_TIMEOUT_MS } from "./support/crash-scene.js";
import { crashInWindow, effectsByTool, seedScene } from "./support/seed-scenario.js";
import { buildSupportAgent } from "./support/support-agent.js";

describe("the trace of a run continued after a SIGKILL mid tool node", () => {
  it(
    "shows the replayed call, the in-doubt ones, and the retried one",
    { timeout: SCENE_TEST_TIMEOUT_MS },
    async () => {
      const scene = seedScene("traces", "sqlite");
      const policies = { charge_card: "fail", send_receipt: "retry" } as const;
      try {
        const killed = await crashInWindow(scene, "invoke", policies);
        const { tracer, spans, span } = testTracer();
        const checkpointer = openStore(scene.store);
        const params = { ...scene.runs[0]!.params, input: { kind: "continue" as const } };
        delete params.kill;
        const app = buildSupportAgent(params, {
          checkpointer,
          faultPoints: new FaultPoints(),
          logger: silentLogger,
          tracer,
          onHang: () => {},
        });
        const result = await app.invoke(null, { threadId: scene.threadId });
        await checkpointer.close();
        expect(result.status).toBe("completed");
        // The card was charged once, before the crash; the continued run did not charge again.
        expect(effectsByTool(await scene.read()).charge_card).toBe(
          effectsByTool(killed).charge_card,
        );

        const tree = spanTree(spans());
        expect(span("invoke_agent support").attributes).toMatchObject({
          "tenxgraph.run.mode": "continue",
          "tenxgraph.run.status": "completed",
        });
        expect(span("execute_tool lookup_order").attributes).toMatchObject({
          "tenxgraph.tool.outcome": "replayed",
        });
        const charge = span("execute_tool charge_card");
        expect(charge.attributes).toMatchObject({
          "tenxgraph.tool.outcome": "in_doubt",
          "tenxgraph.tool.policy": "fail",
          "error.type": "tool_error",
        });
        expect(charge.events.map((e) => [e.name, e.attributes])).toEqual([
          [
            "tenxgraph.tool.in_doubt",
            { "tenxgraph.tool.attempt": 1, "tenxgraph.tool.policy": "fail" },
          ],
        ]);
        const receipt = span("execute_tool send_receipt");
        expect(receipt.attributes).toMatchObject({
          "tenxgraph.tool.outcome": "ran",
          "tenxgraph.tool.attempt": 2,
        });
        expect(receipt.events.map((e) => e.name)).toEqual(["tenxgraph.tool.in_doubt"]);
        expect(tree.split("\n").map((line) => line.trim().split("  ")[0])).toEqual([
          "invoke_agent support",
          "step TOOL",
          "execute_tool lookup_order",
          "execute_tool charge_card",
          "· event tenxgraph.tool.in_doubt",
          "execute_tool send_receipt",
          "· event tenxgraph.tool.in_doubt",
          "step MAIN",
        ]);
      } finally {
        await scene.dispose();
      }
    },
  );
});
