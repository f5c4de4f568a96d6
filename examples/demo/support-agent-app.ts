import { appendFileSync } from "node:fs";
import { z } from "zod";
import { END, Message, StateGraph, ToolNode, tool } from "@tenxgraph/core";
import type { Checkpointer, FaultInjector, Logger } from "@tenxgraph/core";
import { ScriptedModel } from "@tenxgraph/core/testing";

/** Where the demo's support agent keeps its threads and reports what reached the outside world. */
export interface DemoAppOptions {
  checkpointer: Checkpointer;
  /** Append-only file: one line per charge or email that really happened. */
  outsideWorldLog: string;
  faultPoints?: FaultInjector;
  logger: Logger;
}

export const DEMO_THREAD_ID = "demo-order-4821";

/** The demo's run settings: short deadlines, so a dead worker's claims are found stale fast. */
export const DEMO_RUN_CONFIG = { threadId: DEMO_THREAD_ID, toolTimeout: 30, nodeTimeout: 60 };

/**
 * The seed's support agent: a scripted model asks for three tools in one turn; `charge_card`
 * carries a domain key, and `send_receipt` takes a moment to talk to the mailer.
 */
export function buildSupportAgent(options: DemoAppOptions) {
  const outside = (line: string) => appendFileSync(options.outsideWorldLog, `${line}\n`);
  const order = z.object({ order_id: z.string() });
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Find an order.",
    schema: order,
    execute: (args) => ({ order_id: args.order_id, amount_cents: 4200 }),
  });
  const chargeCard = tool({
    name: "charge_card",
    description: "Charge the customer's saved card for an order.",
    schema: order.extend({ amount_cents: z.number().int() }),
    idempotencyKey: (args) => `order-${args.order_id}-charge`,
    async execute(args, ctx) {
      outside(`payment provider: charged order ${args.order_id} (key ${ctx.idempotencyKey})`);
      return "Charged 42 USD";
    },
  });
  const sendReceipt = tool({
    name: "send_receipt",
    description: "Email the receipt.",
    schema: order,
    async execute(args, ctx) {
      await new Promise((resolve) => setTimeout(resolve, 800)); // the mailer is slow today
      ctx.signal.throwIfAborted();
      outside(`mailer: sent the receipt for order ${args.order_id}`);
      return "Receipt sent";
    },
  });
  const model = new ScriptedModel([
    {
      toolCalls: [
        { name: "lookup_order", args: { order_id: "4821" } },
        { name: "charge_card", args: { order_id: "4821", amount_cents: 4200 } },
        { name: "send_receipt", args: { order_id: "4821" } },
      ],
    },
    "Order 4821 is charged and the receipt is on its way.",
  ]);
  return new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode([lookupOrder, chargeCard, sendReceipt]))
    .addConditionalEdges("MAIN", (state) =>
      state.messages.at(-1)?.toolCalls?.length ? "TOOL" : END,
    )
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({
      checkpointer: options.checkpointer,
      faultPoints: options.faultPoints,
      logger: options.logger,
      // A claim whose worker stopped heartbeating for 1 s is in doubt (default 3 s).
      stopPollIntervalMs: 250,
      claimStaleAfterMs: 1000,
    });
}

export const DEMO_INPUT = { messages: [Message.user("Please charge order 4821 and email me")] };
