import { z } from "zod";
import {
  Message,
  interrupt,
  silentLogger,
  tool,
  type BaseState,
  type NodeContext,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { supportAgent } from "@tenxgraph/core/testing";
import type { Gate } from "./gate.js";

/**
 * The graph the client tests serve. The last user message says what the model does:
 * `charge <n>` calls charge_card (domain key `order-<n>-charge`; in doubt it asks a human),
 * `approve <a> <b> …` calls approve_refund once per name (each pauses with `interrupt()`),
 * anything else is echoed. After tool results the model sums them up. The model waits at
 * `gate` first (sending tokens while it waits), so a test can hold a run while it is running.
 */
export function buildClientGraph(checkpointer: Checkpointer, gate: Gate, charges: string[]) {
  const chargeCard = tool({
    name: "charge_card",
    description: "Charge the saved card for an order.",
    schema: z.object({ order_id: z.string() }),
    idempotencyKey: (args) => `order-${args.order_id}-charge`,
    onInDoubt: "interrupt",
    execute: (args) => {
      charges.push(args.order_id);
      return `Charged order ${args.order_id}`;
    },
  });
  const approveRefund = tool({
    name: "approve_refund",
    description: "Ask a human to approve a refund.",
    schema: z.object({ who: z.string() }),
    execute: (args) => {
      const answer = interrupt({ question: `Refund ${args.who}?` }, { message: "approve?" });
      return `${args.who}: ${JSON.stringify(answer)}`;
    },
  });

  async function model(state: BaseState, ctx: NodeContext) {
    const replyId = `reply-${ctx.step}`;
    await gate.pass(ctx.signal, () =>
      ctx.emit({ type: "message_delta", node: ctx.node, messageId: replyId, delta: "." }),
    );
    const last = state.messages.at(-1);
    if (last?.role === "tool") {
      const results = state.messages.filter((m) => m.role === "tool").map((m) => Message.text(m));
      return Message.assistant(`Done: ${results.join("; ")}`);
    }
    const text = last ? Message.text(last) : "";
    const charge = /^charge (\S+)/.exec(text);
    if (charge) return callTools([["charge_card", { order_id: charge[1] }]]);
    const approve = /^approve (.+)/.exec(text);
    if (approve) {
      const names = approve[1]!.split(" ");
      return callTools(names.map((who) => ["approve_refund", { who }] as const));
    }
    return Message.assistant(`Echo: ${text}`);
  }

  return supportAgent({
    model,
    tools: [chargeCard, approveRefund],
    checkpointer,
    // A claim left by a dead run is in doubt after 200 ms, so tests need not wait long.
    stopPollIntervalMs: 50,
    claimStaleAfterMs: 200,
    logger: silentLogger,
  });
}

function callTools(calls: readonly (readonly [string, object])[]) {
  return Message.assistant(
    "",
    calls.map(([name, args], i) => ({
      id: `call_${i + 1}`,
      name,
      arguments: JSON.stringify(args),
    })),
  );
}
