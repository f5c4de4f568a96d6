import { z } from "zod";
import { END } from "../../definition/edges.js";
import { StateGraph } from "../../graph/state-graph.js";
import { silentLogger } from "../../events/logger.js";
import type { Checkpointer } from "../../storage/checkpointer.js";
import { ToolNode } from "../../tools/tool-node.js";
import { tool } from "../../tools/tool.js";
import { ScriptedModel } from "../scripted-model.js";

/**
 * A support agent on `checkpointer`: the model asks to charge order 42, then says "Done." (and
 * "Done." again after a second tool step); the card is charged into `charges`.
 */
export function chargeAgent(checkpointer: Checkpointer, charges: string[]) {
  const chargeCard = tool({
    name: "charge_card",
    description: "Charge the customer's card for an order.",
    schema: z.object({ order_id: z.string() }),
    execute: (args) => {
      charges.push(args.order_id);
      return `Charged order ${args.order_id}`;
    },
  });
  const model = new ScriptedModel([
    { toolCalls: [{ name: "charge_card", args: { order_id: "42" } }] },
    "Done.",
    "Done.",
  ]);
  return new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode([chargeCard]))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls?.length ? "TOOL" : END;
    })
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
}
