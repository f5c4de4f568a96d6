/**
 * The agent behind the chat page (`npm run example:chat-ui`): a scripted model (no API key
 * needed) that streams its words, a refund that asks the user first (`interrupt()`: the page's
 * Approve / Deny buttons), and a slow receipt, long enough to reload the page mid-run and see the
 * run finish. Threads live in a SQLite file.
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  END,
  Message,
  StateGraph,
  ToolNode,
  interrupt,
  tool,
  type BaseState,
} from "@tenxgraph/core";
import type { NodeContext } from "@tenxgraph/core";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { z } from "zod";

const WORD_MS = Number(process.env.CHAT_UI_WORD_MS ?? 60);
const RECEIPT_MS = Number(process.env.CHAT_UI_RECEIPT_MS ?? 3000);
const order = z.object({ order_id: z.string() });

const refund = tool({
  name: "refund_payment",
  description: "Refund an order, once the user approves.",
  schema: order,
  idempotencyKey: (args) => `order-${args.order_id}-refund`,
  execute(args) {
    const decision = interrupt<{ approved: boolean; reason?: string }>(args, {
      message: `Refund order ${args.order_id}?`,
    });
    if (!decision?.approved) return "Refund declined";
    console.error(`outside world: refunded order ${args.order_id}`);
    return "Refunded 42 USD";
  },
});

const sendReceipt = tool({
  name: "send_receipt",
  description: "Email the receipt.",
  schema: order,
  async execute(args, ctx) {
    await sleep(RECEIPT_MS, undefined, { signal: ctx.signal });
    console.error(`outside world: sent the receipt for order ${args.order_id}`);
    return "Receipt sent";
  },
});

/** The reply for the transcript so far: replayed steps get the same one. */
function reply(state: BaseState) {
  const asked = Message.text(state.messages.findLast((m) => m.role === "user") ?? Message.user(""));
  const id = /\d+/.exec(asked)?.[0];
  const last = state.messages.at(-1)!;
  const call = (name: string) => ({
    id: `call_${name}`,
    name,
    arguments: JSON.stringify({ order_id: id }),
  });
  if (last.role === "tool")
    return Message.assistant(`Order ${id}: ${Message.text(last)}. Anything else?`);
  if (id && /refund/i.test(asked)) return Message.assistant("", [call("refund_payment")]);
  if (id && /receipt/i.test(asked)) return Message.assistant("", [call("send_receipt")]);
  return Message.assistant(
    "Hello! I can refund an order (say: refund order 42) or email its receipt (say: receipt for order 42).",
  );
}

/** Sends the reply's words one by one, as a streaming model does. */
async function model(state: BaseState, ctx: NodeContext) {
  const message = reply(state);
  for (const delta of Message.text(message).match(/\S+\s*/g) ?? []) {
    await sleep(WORD_MS, undefined, { signal: ctx.signal });
    ctx.emit({ type: "message_delta", node: ctx.node, messageId: message.id, delta });
  }
  return message;
}

export const app = new StateGraph()
  .addNode("MAIN", model)
  .addNode("TOOL", new ToolNode([refund, sendReceipt]))
  .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
  .addEdge("TOOL", "MAIN")
  .setEntryPoint("MAIN")
  .compile({
    checkpointer: new SqliteCheckpointer({
      path: process.env.TENXGRAPH_DB ?? ".tenxgraph/chat-ui-example.db",
    }),
  });
