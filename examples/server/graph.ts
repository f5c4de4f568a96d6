/**
 * The support agent served over HTTP: `npx tenxgraph api --config examples/server/tenxgraph.json`.
 * A scripted model (no API key needed) asks for the three support tools for the order the user
 * names, then answers; threads live in a SQLite file, so a restarted server (or a killed one)
 * continues them from the tool ledger. Open http://127.0.0.1:8000/inspector/ to watch them.
 *
 * To see a call in doubt in the inspector: start it with `TENXGRAPH_MAILER_DELAY_MS=30000`, send
 * "charge order 7", kill the server (`kill -9`) while the receipt is being sent, start it again,
 * and continue the thread: send_receipt asks you whether the receipt went out.
 */
import { END, StateGraph, ToolNode, tool } from "@tenxgraph/core";
// lookup_order, charge_card (with a domain idempotency key) and send_receipt, and a model that
// reads the order number from the user's message: the fixture the tests use too.
import { supportModel, supportTools } from "@tenxgraph/core/testing";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";

/** Every charge and email that really happens is printed. */
const [lookupOrder, chargeCard, sendReceipt] = supportTools({
  outside: (line) => console.error(`outside world: ${line}`),
  mailerDelayMs: Number(process.env.TENXGRAPH_MAILER_DELAY_MS ?? 0),
});
// Whether an email went out is for a person to check: in doubt, the mailer asks.
const askingMailer = tool({ ...sendReceipt, onInDoubt: "interrupt" });

export const app = new StateGraph()
  .addNode("MAIN", supportModel)
  .addNode("TOOL", new ToolNode([lookupOrder, chargeCard, askingMailer]))
  .addConditionalEdges("MAIN", (state) => (state.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
  .addEdge("TOOL", "MAIN")
  .setEntryPoint("MAIN")
  .compile({
    checkpointer: new SqliteCheckpointer({
      path: process.env.TENXGRAPH_DB ?? ".tenxgraph/server-example.db",
    }),
  });
