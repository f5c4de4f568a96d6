import { z } from "zod";
import { StateGraph, END, ToolNode, tool, Message, InMemoryCheckpointer } from "@tenxgraph/core";
import { FaultPoints, ScriptedModel } from "@tenxgraph/core/testing";

const charges: string[] = []; // stands in for the payment provider
const chargeCard = tool({
  name: "charge_card",
  description: "Charge the customer's saved card for an order.",
  schema: z.object({ order_id: z.string(), amount_cents: z.number().int() }),
  idempotencyKey: (args) => `order-${args.order_id}-charge`, // one charge per order, ever
  async execute(args, ctx) {
    charges.push(`order ${args.order_id}, key ${ctx.idempotencyKey}`);
    return `Charged ${args.amount_cents / 100} USD`;
  },
});
const model = new ScriptedModel([
  { toolCalls: [{ name: "charge_card", args: { order_id: "4821", amount_cents: 4200 } }] },
  "Done: order 4821 is charged.",
]);
// Simulate a crash right after the charge went through and was recorded, before the step's write.
const faults = new FaultPoints().arm(
  "ledger.after_record",
  () => {
    throw new Error("worker died");
  },
  { times: 1 },
);
const app = new StateGraph()
  .addNode("MAIN", model)
  .addNode("TOOL", new ToolNode([chargeCard]))
  .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
  .addEdge("TOOL", "MAIN")
  .setEntryPoint("MAIN")
  .compile({
    checkpointer: new InMemoryCheckpointer(),
    faultPoints: faults,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });

const config = { threadId: "order-4821", toolTimeout: 60, nodeTimeout: 300 };
await app
  .invoke({ messages: [Message.user("charge order 4821")] }, config)
  .catch((e) => console.log("crashed:", e.message));
const r = await app.invoke(null, config); // continue the unfinished run: the charge replays from the ledger
console.log(r.status, "|", Message.text(r.state.messages.at(-1)!));
for (const e of await app.getToolLedger(config))
  console.log("ledger:", e.toolName, e.status, "attempt", e.attempt);
console.log("charges:", charges); // exactly one
