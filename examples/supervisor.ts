/**
 * A supervisor and three worker agents, scripted (no network): the supervisor hands the question
 * to `researcher` and `pricer` at once (two subgraphs in one parallel step), then to `writer`,
 * whose draft waits for a human's approval. The approval is asked inside the writer's subgraph
 * and answered through the supervisor's thread. Every tool call of every worker goes through the
 * ledger of the worker's own thread.
 *
 *   npm run example:supervisor
 */
import { z } from "zod";
import {
  Command,
  END,
  Message,
  StateGraph,
  ToolNode,
  interrupt,
  silentLogger,
  tool,
  type BaseState,
} from "@tenxgraph/core";
import { createSupervisor } from "@tenxgraph/models";

const outside: string[] = []; // what reached the outside world

/** A worker that calls its one tool, then answers from the result (after `approve`, if given). */
function worker(name: string, run: (topic: string) => string, approve = false) {
  const lookup = tool({
    name: `${name}_lookup`,
    description: `What ${name} looks up`,
    schema: z.object({ topic: z.string() }),
    execute: ({ topic }) => {
      outside.push(`${name} looked up ${topic}`);
      return run(topic);
    },
  });
  const callId = `${name}-1`;
  return new StateGraph<BaseState>()
    .addNode("MODEL", (state) => {
      const last = state.messages.at(-1);
      if (last?.role !== "tool" || last.toolCallId !== callId) {
        const args = JSON.stringify({ topic: "kelp" });
        return Message.assistant("", [{ id: callId, name: lookup.name, arguments: args }]);
      }
      if (approve && interrupt<string>(`Publish "${Message.text(last)}"?`) !== "yes") {
        return Message.assistant(`${name}: not published`);
      }
      return Message.assistant(`${name}: ${Message.text(last)}`);
    })
    .addNode("TOOLS", new ToolNode([lookup]))
    .addConditionalEdges("MODEL", (state) => (state.messages.at(-1)?.toolCalls ? "TOOLS" : END))
    .addEdge("TOOLS", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ logger: silentLogger });
}

/** The scripted supervisor: research and prices in parallel, then the writer, then an answer. */
function supervisor(state: BaseState) {
  const handed = state.messages.filter(
    (m) => m.role === "tool" && /^Transferred/.test(Message.text(m)),
  );
  const handoff = (...names: string[]) =>
    Message.assistant(
      "",
      names.map((name, i) => ({
        id: `s-${handed.length + i}`,
        name: `transfer_to_${name}`,
        arguments: "{}",
      })),
    );
  if (handed.length === 0) return handoff("researcher", "pricer");
  if (handed.length === 2) return handoff("writer");
  return Message.assistant(`Done: ${Message.text(state.messages.at(-1)!)}`);
}

const app = createSupervisor({
  model: supervisor,
  agents: [
    {
      name: "researcher",
      description: "Finds facts",
      graph: worker("researcher", (t) => `${t} grows 50 cm a day`),
    },
    {
      name: "pricer",
      description: "Finds prices",
      graph: worker("pricer", (t) => `${t} sells at 4 EUR/kg`),
    },
    {
      name: "writer",
      description: "Writes the note",
      graph: worker("writer", (t) => `a note on ${t}`, true),
    },
  ],
  compile: { logger: silentLogger },
});

const threadId = "kelp-report";
const paused = await app.invoke({ messages: [Message.user("Write a note on kelp")] }, { threadId });
console.log(
  `status: ${paused.status}; asked: ${paused.interrupts.map((i) => `${i.id} ${JSON.stringify(i.value)}`).join(", ")}`,
);

const done = await app.invoke(new Command({ resume: "yes" }), { threadId });
console.log(`status: ${done.status}`);
for (const message of done.state.messages) {
  const calls = message.toolCalls?.map((call) => call.name).join(", ");
  console.log(`  ${message.role.padEnd(9)} ${calls ? `[${calls}]` : Message.text(message)}`);
}
console.log(`outside world: ${outside.join("; ")}`);
