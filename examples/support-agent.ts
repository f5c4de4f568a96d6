import { z } from "zod";
import { StateGraph, END, ToolNode, tool, Message, silentLogger } from "@tenxgraph/core";
import { FaultPoints, ScriptedModel } from "@tenxgraph/core/testing";

const outside: string[] = []; // what reached the outside world: the payment provider, the mailer
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
  idempotencyKey: (args) => `order-${args.order_id}-charge`, // per thread; give it to the provider too
  // Killed inside the charge (started, never recorded): ask the provider, never charge blindly.
  onInDoubt: {
    reconcile: (args, ctx) =>
      outside.includes(`charge ${args.order_id} (${ctx.idempotencyKey})`)
        ? "Charged 42 USD"
        : undefined,
  },
  async execute(args, ctx) {
    outside.push(`charge ${args.order_id} (${ctx.idempotencyKey})`);
    return "Charged 42 USD";
  },
});
const sendReceipt = tool({
  name: "send_receipt",
  description: "Email the receipt.",
  schema: order,
  async execute(args) {
    await new Promise((resolve) => setTimeout(resolve, 50)); // the mailer takes its time
    outside.push(`receipt ${args.order_id}`);
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
// The worker dies right after charge_card returned and was recorded, mid tool node.
const crash = new FaultPoints().arm(
  "ledger.after_record",
  () => {
    throw new Error("worker killed");
  },
  { when: (at) => at.toolName === "charge_card", times: 1 },
);
const app = new StateGraph()
  .addNode("MAIN", model)
  .addNode("TOOL", new ToolNode([lookupOrder, chargeCard, sendReceipt]))
  .addConditionalEdges("MAIN", (state) => (state.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
  .addEdge("TOOL", "MAIN")
  .setEntryPoint("MAIN")
  .compile({ faultPoints: crash, logger: silentLogger });

const config = { threadId: "order-4821", toolTimeout: 60, nodeTimeout: 300 };
await app
  .invoke({ messages: [Message.user("charge order 4821 and email me")] }, config)
  .catch((e) => console.log("crashed:", e.message));
const result = await app.invoke(null, config); // continue: the finished calls replay from the ledger
console.log(result.status, "|", Message.text(result.state.messages.at(-1)!));
for (const e of await app.getToolLedger(config))
  console.log("ledger:", e.toolName, e.status, "attempt", e.attempt);
console.log("outside world:", outside); // one charge, one receipt
