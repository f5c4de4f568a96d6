/**
 * The support agent served over HTTP: `npx tenxgraph api --config examples/server/tenxgraph.json`.
 * A scripted model (no API key needed) asks for the three support tools for the order number the
 * user names, then answers; threads live in a SQLite file, so a restarted server (or a killed
 * one) continues them from the tool ledger.
 */
import { END, StateGraph, ToolNode } from "@tenxgraph/core";
// lookup_order, charge_card (with a domain idempotency key) and send_receipt, and a model that
// reads the order number from the user's message: the fixture the tests use too.
import { supportModel, supportTools } from "@tenxgraph/core/testing";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";

/** Every charge and email that really happens is printed. */
const tools = supportTools({ outside: (line) => console.error(`outside world: ${line}`) });

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
