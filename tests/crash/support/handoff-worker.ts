/**
 * A swarm process for the handoff crash test: Alice hands off to Bob with a handoff tool that
 * logs each run to `LOG`. With `KILL=1`, the process SIGKILLs itself right after Alice's child
 * thread wrote its last step (the handoff), before the swarm's step is written.
 */
import { appendFileSync } from "node:fs";
import { END, Message, StateGraph, ToolNode, silentLogger, type BaseState } from "@tenxgraph/core";
import { FaultPoints } from "@tenxgraph/core/testing";
import { createHandoffTool, createSwarm } from "@tenxgraph/models";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";

const { DB, LOG, KILL } = process.env as Record<string, string>;
const handoff = createHandoffTool({ agentName: "Bob" });
const logged = {
  ...handoff,
  execute: (args: never, ctx: never) => {
    appendFileSync(LOG!, "handoff\n");
    return handoff.execute(args, ctx);
  },
};
const alice = new StateGraph<BaseState>()
  .addNode("MODEL", (state) =>
    state.messages.at(-1)?.role === "user"
      ? Message.assistant("", [{ id: "a-1", name: handoff.name, arguments: "{}" }])
      : Message.assistant("Alice here"),
  )
  .addNode("TOOLS", new ToolNode([logged as typeof handoff]))
  .addConditionalEdges("MODEL", (state) => (state.messages.at(-1)?.toolCalls ? "TOOLS" : END))
  .addEdge("TOOLS", "MODEL")
  .setEntryPoint("MODEL")
  .compile({ logger: silentLogger });
const bob = new StateGraph<BaseState>()
  .addNode("MODEL", () => {
    appendFileSync(LOG!, "bob\n");
    return Message.assistant("Bob here");
  })
  .addEdge("MODEL", END)
  .setEntryPoint("MODEL")
  .compile({ logger: silentLogger });

const faults = new FaultPoints();
if (KILL) {
  faults.arm("step.after_write", () => void process.kill(process.pid, "SIGKILL"), {
    when: (at) => at.threadId.startsWith("t|Alice@") && at.node === "END",
  });
}
const app = createSwarm({
  agents: [
    { name: "Alice", graph: alice },
    { name: "Bob", graph: bob },
  ],
  defaultActiveAgent: "Alice",
}).compile({
  checkpointer: new SqliteCheckpointer({ path: DB! }),
  logger: silentLogger,
  faultPoints: faults,
});
const existing = await app.getState({ threadId: "t" }).catch(() => null);
const input = existing && existing.step > 0 ? null : { messages: [Message.user("to Bob")] };
const result = await app.invoke(input, { threadId: "t" });
process.stdout.write(JSON.stringify({ status: result.status, state: result.state }));
