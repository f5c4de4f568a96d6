/**
 * The support agent run by a pool of workers: `npx tenxgraph worker --config
 * examples/workers/tenxgraph.json` on any number of hosts, `npx tenxgraph api --config
 * examples/workers/tenxgraph.json --workers 0` in front. Threads and the run queue both live in
 * the PostgreSQL named by TENXGRAPH_RUNS_DSN, so every host sees them, and a dead worker's run
 * is finished by another. A scripted model (no API key) asks for the three support tools; the
 * receipt takes two seconds, long enough to kill a worker in the middle of it.
 */
import { END, StateGraph, ToolNode } from "@tenxgraph/core";
import { supportModel, supportTools } from "@tenxgraph/core/testing";
import { PgCheckpointer } from "@tenxgraph/postgres";

const postgresDsn = process.env.TENXGRAPH_RUNS_DSN;
if (!postgresDsn) throw new Error("Set TENXGRAPH_RUNS_DSN to a PostgreSQL DSN (threads and runs)");

/** Every charge and email that really happens is printed, with the worker's pid. */
const tools = supportTools({
  outside: (line) => console.error(`outside world (pid ${process.pid}): ${line}`),
  mailerDelayMs: 2000,
});

export const app = new StateGraph()
  .addNode("MAIN", supportModel)
  .addNode("TOOL", new ToolNode(tools))
  .addConditionalEdges("MAIN", (state) => (state.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
  .addEdge("TOOL", "MAIN")
  .setEntryPoint("MAIN")
  .compile({ checkpointer: new PgCheckpointer({ postgresDsn }) });
