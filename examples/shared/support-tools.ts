import { z } from "zod";
import { tool } from "@tenxgraph/core";
import type { ScriptedTurn } from "@tenxgraph/core/testing";

/** Options of {@link supportTools}. */
export interface SupportToolsOptions {
  /** Told every charge and email that really happens, before the tool returns. */
  outside: (line: string) => void;
  /** How long the mailer takes to send a receipt (default 0). */
  mailerDelayMs?: number;
}

/**
 * The support agent's tools, shared by the examples: `lookup_order`, `charge_card` (with a
 * domain idempotency key, handed to the payment provider) and `send_receipt`.
 */
export function supportTools({ outside, mailerDelayMs = 0 }: SupportToolsOptions) {
  const order = z.object({ order_id: z.string() });
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Find an order: its id and amount in cents.",
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
      return `Charged ${args.amount_cents / 100} USD`;
    },
  });
  const sendReceipt = tool({
    name: "send_receipt",
    description: "Email the receipt of an order.",
    schema: order,
    async execute(args, ctx) {
      if (mailerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, mailerDelayMs));
      ctx.signal.throwIfAborted();
      outside(`mailer: sent the receipt for order ${args.order_id}`);
      return "Receipt sent";
    },
  });
  return [lookupOrder, chargeCard, sendReceipt];
}

/** The scripted model's replies: the three calls in one message, then the answer. */
export const SUPPORT_SCRIPT: ScriptedTurn[] = [
  {
    toolCalls: [
      { name: "lookup_order", args: { order_id: "4821" } },
      { name: "charge_card", args: { order_id: "4821", amount_cents: 4200 } },
      { name: "send_receipt", args: { order_id: "4821" } },
    ],
  },
  "Order 4821 is charged and the receipt is on its way.",
];
