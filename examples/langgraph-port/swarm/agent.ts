// Ported from LangGraph.js's swarm quickstart, published in langchain-ai/langgraphjs as
// libs/langgraph-swarm/README.md ("Quickstart"). What changed, and why:
// - imports: `@tenxgraph/models` and `@tenxgraph/core` for `@langchain/langgraph-swarm`,
//   `@langchain/langgraph/prebuilt`, `@langchain/langgraph`, `@langchain/core/tools` and
//   `@langchain/openai`; `InMemoryCheckpointer` for `MemorySaver`;
// - the model is an AI SDK model name (`model: "openai/gpt-4o"`) instead of
//   `llm: new ChatOpenAI({ modelName: "gpt-4o" })`;
// - the tool is `tool({ name, description, schema, execute })` instead of `tool(fn, fields)`;
// - a message is `Message.user(text)` (it gets an id) instead of `{ role, content }`;
// - the thread is `{ threadId: "1" }` instead of `{ configurable: { thread_id: "1" } }`;
// - each turn's last message is printed rather than the whole result object.
// Run it with OPENAI_API_KEY set (tests point OPENAI_BASE_URL at a scripted server).
import { z } from "zod";
import { InMemoryCheckpointer, Message, tool } from "@tenxgraph/core";
import { createReactAgent, createSwarm, createHandoffTool } from "@tenxgraph/models";

// Create specialized tools
const add = tool({
  name: "add",
  description: "Add two numbers.",
  schema: z.object({
    a: z.number(),
    b: z.number(),
  }),
  execute: async (args) => args.a + args.b,
});

// Create agents with handoff tools
const alice = createReactAgent({
  model: "openai/gpt-4o",
  tools: [add, createHandoffTool({ agentName: "Bob" })],
  name: "Alice",
  prompt: "You are Alice, an addition expert.",
});

const bob = createReactAgent({
  model: "openai/gpt-4o",
  tools: [
    createHandoffTool({
      agentName: "Alice",
      description: "Transfer to Alice, she can help with math",
    }),
  ],
  name: "Bob",
  prompt: "You are Bob, you speak like a pirate.",
});

// Create swarm workflow
const checkpointer = new InMemoryCheckpointer();
const workflow = createSwarm({
  agents: [alice, bob],
  defaultActiveAgent: "Alice",
});

export const app = workflow.compile({
  checkpointer,
});

const config = { threadId: "1" };
const turn1 = await app.invoke({ messages: [Message.user("i'd like to speak to Bob")] }, config);
console.log(Message.text(turn1.state.messages.at(-1)!));

const turn2 = await app.invoke({ messages: [Message.user("what's 5 + 7?")] }, config);
console.log(Message.text(turn2.state.messages.at(-1)!));
