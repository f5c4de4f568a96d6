/** A project whose node sleeps durably, for the timer tests. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A graph whose node sleeps the number of milliseconds its user message says, then appends
 * `<thread> <pid> <graph>` to `woke.log` and answers "woke". With `twoGraphs`, the project
 * serves two such graphs (`graphs`): `agent` (the default) and `other`, each writing its id.
 */
export function writeSleepProject(
  dir: string,
  runs?: Record<string, unknown>,
  { twoGraphs = false } = {},
): { config: string; wokeLog: string } {
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "tenxgraph.json");
  const wokeLog = join(dir, "woke.log");
  writeFileSync(
    config,
    JSON.stringify({
      agent: "./graph.mjs:graph",
      ...(twoGraphs ? { graphs: { agent: "./graph.mjs:graph", other: "./graph.mjs:other" } } : {}),
      checkpointer: "./store.mjs:checkpointer",
      ...(runs ? { runs } : {}),
    }),
  );
  writeFileSync(
    join(dir, "store.mjs"),
    `import { SqliteCheckpointer } from "@tenxgraph/sqlite";
     export const checkpointer = new SqliteCheckpointer({ path: ${JSON.stringify(join(dir, "threads.db"))} });`,
  );
  writeFileSync(
    join(dir, "graph.mjs"),
    `import { appendFileSync } from "node:fs";
     import { END, Message, StateGraph } from "@tenxgraph/core";
     const napper = (graphId) => new StateGraph()
       .addNode("NAP", async (state, ctx) => {
         await ctx.sleep(Number(Message.text(state.messages.at(-1))));
         appendFileSync(${JSON.stringify(wokeLog)}, [ctx.threadId, process.pid, graphId].join(" ") + "\\n");
         return Message.assistant("woke");
       })
       .addEdge("NAP", END)
       .setEntryPoint("NAP");
     export const graph = napper("agent");
     export const other = napper("other");`,
  );
  return { config, wokeLog };
}

/** The graphs that woke `threadId` up, from its `woke.log` lines. */
export function wokenBy(wokeLog: string, threadId: string): string[] {
  if (!existsSync(wokeLog)) return [];
  return readFileSync(wokeLog, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${threadId} `))
    .map((line) => line.split(" ")[2]!);
}

/** The `woke.log` lines of `threadId`, as the pids that wrote them. */
export function wakers(wokeLog: string, threadId: string): number[] {
  if (!existsSync(wokeLog)) return [];
  return readFileSync(wokeLog, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${threadId} `))
    .map((line) => Number(line.split(" ")[1]));
}
