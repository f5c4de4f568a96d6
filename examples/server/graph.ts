/**
 * The support agent served over HTTP: `npx tenxgraph api --config examples/server/tenxgraph.json`.
 * A scripted model (no API key needed) asks for the support agent's three tools for the order number the
 * user names, then answers; threads live in a SQLite file, so a restarted server (or a killed
 * one) continues them from the tool ledger.
 */
import { END, Message, StateGraph, ToolNode, type BaseState } from "@tenxgraph/core";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { supportTools } from "../shared/support-tools.js";

/** Every charge and email that really happens is printed (and appended to OUTSIDE_WORLD_LOG). */
const tools = supportTools({ outside: (line) => console.error(`outside world: ${line}`) });

/** Asks for the three calls for the order the user's last message names, then answers. */
function supportModel(state: BaseState) {
  const last = state.messages.at(-1);
  const order = /\d+/.exec(
    [...state.messages]
      .reverse()
      .find((m) => m.role === "user")
      ?.content.toString() ?? "",
  )?.[0];
  if (last?.role === "tool")
    return Message.assistant(`Order ${order} is charged and the receipt is on its way.`);
  if (!order) return Message.assistant("Which order should I charge? Tell me its number.");
  const call = (id: string, name: string, args: object) => ({
    id,
    name,
    arguments: JSON.stringify(args),
  });
  return Message.assistant("", [
    call("call_1", "lookup_order", { order_id: order }),
    call("call_2", "charge_card", { order_id: order, amount_cents: 4200 }),
    call("call_3", "send_receipt", { order_id: order }),
  ]);
}

export const app = new StateGraph()
  .addNode("MAIN", supportModel)
  .addNode("TOOL", new ToolNode(tools))
  .addConditionalEdges("MAIN", (state) => (state.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
  .addEdge("TOOL", "MAIN")
  .setEntryPoint("MAIN")
  .compile({
    checkpointer: new SqliteCheckpointer({
      path: process.env.TENXGRAPH_DB ?? ".tenxgraph/server-example.db",
    }),
  });
