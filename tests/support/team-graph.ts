import { z } from "zod";
import { END, Message, StateGraph, silentLogger, tool, type BaseState } from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { supportAgent } from "@tenxgraph/core/testing";

/**
 * A supervisor whose one node, WORKER, is a subgraph: each turn runs the worker on a child
 * thread of its own (`<thread>|WORKER@<step>`), where its tool ledger lives. The worker is a
 * support agent: `charge <n>` calls charge_card (key `order-<n>-charge`) and then sums up,
 * anything else is echoed. `charged` gets each order really charged (and may hold the call, to
 * leave it in doubt); `onInDoubt: "interrupt"` makes such a call wait for a decision.
 */
export function buildTeamGraph(
  checkpointer: Checkpointer,
  charged: (orderId: string) => unknown,
  options: {
    onInDoubt?: "interrupt";
    claimStaleAfterMs?: number;
    stopPollIntervalMs?: number;
  } = {},
) {
  const chargeCard = tool({
    name: "charge_card",
    description: "Charge the saved card for an order.",
    schema: z.object({ order_id: z.string() }),
    idempotencyKey: (args) => `order-${args.order_id}-charge`,
    ...(options.onInDoubt ? { onInDoubt: options.onInDoubt } : {}),
    execute: async (args) => {
      await charged(args.order_id);
      return `Charged order ${args.order_id}`;
    },
  });
  const worker = supportAgent({ model: workerModel, tools: [chargeCard], logger: silentLogger });
  return new StateGraph()
    .addNode("WORKER", worker)
    .addEdge("WORKER", END)
    .setEntryPoint("WORKER")
    .compile({
      checkpointer,
      logger: silentLogger,
      ...(options.claimStaleAfterMs ? { claimStaleAfterMs: options.claimStaleAfterMs } : {}),
      ...(options.stopPollIntervalMs ? { stopPollIntervalMs: options.stopPollIntervalMs } : {}),
    });
}

/** The worker's model: a tool call for `charge <n>`, a summary after tool results, else an echo. */
function workerModel(state: BaseState) {
  const last = state.messages.at(-1);
  if (last?.role === "tool") return Message.assistant(`Done: ${Message.text(last)}`);
  const text = last ? Message.text(last) : "";
  const charge = /^charge (\S+)/.exec(text);
  if (!charge) return Message.assistant(`Echo: ${text}`);
  const args = JSON.stringify({ order_id: charge[1] });
  return Message.assistant("", [{ id: "call_1", name: "charge_card", arguments: args }]);
}
