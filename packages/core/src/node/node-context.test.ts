import { describe, expect, it } from "vitest";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { silentLogger } from "../events/logger.js";
import { ToolNode } from "../tools/tool-node.js";
import type { NodeContext } from "./node-context.js";

/** Every value reachable from `root` through own properties (getters included). */
function reachable(root: object): Set<unknown> {
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number) => {
    if (typeof value !== "object" || value === null || seen.has(value) || depth > 4) return;
    seen.add(value);
    for (const key of Reflect.ownKeys(value)) {
      visit((value as Record<PropertyKey, unknown>)[key], depth + 1);
    }
  };
  visit(root, 0);
  return seen;
}

describe("a node's context", () => {
  it("gives a node no way to the checkpointer, and ids from the graph's generator", async () => {
    const checkpointer = new InMemoryCheckpointer();
    let seen: NodeContext | undefined;
    let id = 0;
    const app = new StateGraph<BaseState>()
      .addNode("MAIN", (_, ctx) => {
        seen = ctx;
        return Message.assistant(ctx.newId());
      })
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile({ checkpointer, logger: silentLogger, ids: () => `id-${++id}` });
    const result = await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t1" });

    expect(seen).toBeDefined();
    expect(Object.keys(seen!)).not.toContain("runtime");
    expect(reachable(seen!).has(checkpointer)).toBe(false);
    const reply = result.state.messages.at(-1)!;
    expect(Message.text(reply)).toMatch(/^id-\d+$/);
  });

  it("refuses a ToolNode run with a context the run loop did not make", async () => {
    const node = new ToolNode([]);
    const forged = { threadId: "t1", signal: new AbortController().signal } as NodeContext;
    const state = { messages: [Message.assistant("", [{ id: "c1", name: "x", arguments: "{}" }])] };
    await expect(node.run(state, forged)).rejects.toThrow(/not made by a graph run/);
  });
});
