/** A project whose node sleeps durably, for the timer tests. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A graph whose node sleeps the number of milliseconds its user message says, then appends
 * `<thread> <pid>` to `woke.log` and answers "woke".
 */
export function writeSleepProject(
  dir: string,
  runs?: Record<string, unknown>,
): { config: string; wokeLog: string } {
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "tenxgraph.json");
  const wokeLog = join(dir, "woke.log");
  writeFileSync(
    config,
    JSON.stringify({
      agent: "./graph.mjs:graph",
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
     export const graph = new StateGraph()
       .addNode("NAP", async (state, ctx) => {
         await ctx.sleep(Number(state.messages.at(-1).content));
         appendFileSync(${JSON.stringify(wokeLog)}, ctx.threadId + " " + process.pid + "\\n");
         return Message.assistant("woke");
       })
       .addEdge("NAP", END)
       .setEntryPoint("NAP");`,
  );
  return { config, wokeLog };
}

/** The `woke.log` lines of `threadId`, as the pids that wrote them. */
export function wakers(wokeLog: string, threadId: string): number[] {
  if (!existsSync(wokeLog)) return [];
  return readFileSync(wokeLog, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${threadId} `))
    .map((line) => Number(line.split(" ")[1]));
}
