import {
  END,
  InMemoryCheckpointer,
  Message,
  StateGraph,
  ToolNode,
  silentLogger,
  type AnyTool,
  type BaseState,
} from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { createReactAgent } from "../react/create-react-agent.js";
import { createSwarm } from "./create-swarm.js";
import { createHandoffTool } from "./handoff-tool.js";

/**
 * An agent whose model hands off when the user's last message names another agent
 * ("to Bob"), and otherwise answers with its name; counts its model turns.
 */
function agent(name: string, handoffs: AnyTool[], turns: Record<string, number>) {
  const toolNode = new ToolNode(handoffs);
  return new StateGraph<BaseState>()
    .addNode("MODEL", (state) => {
      turns[name] = (turns[name] ?? 0) + 1;
      const lastUser = state.messages.findLast((m) => m.role === "user");
      const wanted = /to (\w+)/.exec(Message.text(lastUser!))?.[1];
      const handoff = handoffs.find((t) => t.name === `transfer_to_${wanted?.toLowerCase()}`);
      const last = state.messages.at(-1)!;
      if (handoff && last.role === "user") {
        return Message.assistant("", [{ id: `${name}-h`, name: handoff.name, arguments: "{}" }]);
      }
      return Message.assistant(`${name} here`);
    })
    .addNode("TOOLS", toolNode)
    .addConditionalEdges("MODEL", (state) => (state.messages.at(-1)?.toolCalls ? "TOOLS" : END))
    .addEdge("TOOLS", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ logger: silentLogger });
}

function swarm(turns: Record<string, number>) {
  const alice = agent("Alice", [createHandoffTool({ agentName: "Bob" })], turns);
  const bob = agent("Bob", [createHandoffTool({ agentName: "Alice" })], turns);
  return createSwarm({
    agents: [
      { name: "Alice", graph: alice },
      { name: "Bob", graph: bob },
    ],
    defaultActiveAgent: "Alice",
  }).compile({ checkpointer: new InMemoryCheckpointer(), logger: silentLogger });
}

describe("createSwarm", () => {
  it("hands off between agents and sends the next turn to the agent last active", async () => {
    const turns: Record<string, number> = {};
    const app = swarm(turns);

    const first = await app.invoke({ messages: [Message.user("talk to Bob")] }, { threadId: "t" });
    expect(first.state.activeAgent).toBe("Bob");
    expect(first.state.messages.map((m) => Message.text(m))).toEqual([
      "talk to Bob",
      "",
      "Successfully transferred to Bob",
      "Bob here",
    ]);
    expect(first.state.messages[1]!.toolCalls?.[0]?.name).toBe("transfer_to_bob");

    // The second turn goes straight to Bob, the active agent; Alice is not asked.
    const second = await app.invoke({ messages: [Message.user("hello")] }, { threadId: "t" });
    expect(second.state.messages.map((m) => Message.text(m)).at(-1)).toBe("Bob here");
    expect(turns).toEqual({ Alice: 1, Bob: 2 });
  });

  it("names agents by createReactAgent({ name }) and refuses what cannot be a swarm", () => {
    const named = (name?: string) =>
      createReactAgent({ model: "openai/gpt-4o-mini", tools: [], ...(name && { name }) });
    const workflow = createSwarm({
      agents: [named("Alice"), named("Bob")],
      defaultActiveAgent: "Bob",
    });
    expect([...workflow.compile().definition.nodes.keys()]).toEqual([
      "ACTIVE_AGENT",
      "Alice",
      "Bob",
    ]);

    expect(() => createSwarm({ agents: [], defaultActiveAgent: "A" })).toThrow(/at least one/);
    expect(() => createSwarm({ agents: [named()], defaultActiveAgent: "A" })).toThrow(/no name/);
    expect(() =>
      createSwarm({ agents: [named("A"), named("A")], defaultActiveAgent: "A" }),
    ).toThrow(/unique/);
    expect(() => createSwarm({ agents: [named("A")], defaultActiveAgent: "B" })).toThrow(
      /defaultActiveAgent 'B'/,
    );
    expect(() =>
      createSwarm({ agents: [named("A")], defaultActiveAgent: "A", llm: 1 } as never),
    ).toThrow(/llm/);
  });
});
