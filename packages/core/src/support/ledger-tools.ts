/** Shared by the ledger tests: the seed's support tools and small input helpers. */
import { z } from "zod";
import { Message } from "../messages/message.js";
import { callsTurn } from "./helpers.js";
import type { ToolContext } from "../tools/tool-context.js";
import { tool } from "../tools/tool.js";

export type S = { messages: Message[]; charged?: boolean };

/** The seed's support tools; every side effect lands in `effects`, every context in `contexts`. */
export function supportTools(effects: string[], contexts: ToolContext[] = []) {
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Look up an order.",
    schema: z.object({ order_id: z.string() }),
    execute: (args) => {
      effects.push(`lookup ${args.order_id}`);
      return "order 4821: 42 USD";
    },
  });
  const chargeCard = tool<z.ZodObject<{ order_id: z.ZodString }>, S>({
    name: "charge_card",
    description: "Charge the card.",
    schema: z.object({ order_id: z.string() }),
    execute: (args, ctx) => {
      contexts.push(ctx);
      effects.push(`charge ${args.order_id}`);
      ctx.state.charged = true;
      return `Charged order ${args.order_id}`;
    },
  });
  const sendReceipt = tool({
    name: "send_receipt",
    description: "Email the receipt.",
    schema: z.object({ order_id: z.string() }),
    execute: (args) => {
      effects.push(`receipt ${args.order_id}`);
      return "Receipt sent";
    },
  });
  const refundPayment = tool({
    name: "refund_payment",
    description: "Refund the order.",
    schema: z.object({ order_id: z.string() }),
    execute: (args) => {
      effects.push(`refund ${args.order_id}`);
      return `Refunded order ${args.order_id}`;
    },
  });
  return [lookupOrder, chargeCard, sendReceipt, refundPayment];
}

export const threeCalls = callsTurn("m-1", [
  ["lookup_order", { order_id: "4821" }],
  ["charge_card", { order_id: "4821" }],
  ["send_receipt", { order_id: "4821" }],
]);
export const user = (text: string) => ({ messages: [Message.user(text)] });
export const isCharge = (at: { toolName?: string }) => at.toolName === "charge_card";
