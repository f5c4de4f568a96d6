import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Message } from "../messages/message.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { callsTurn, recordingLogger, settle } from "../support/helpers.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { Send } from "../definition/send.js";
import { StateGraph } from "./state-graph.js";

interface Order extends BaseState {
  order_id?: string;
}

/**
 * A worker built with `new StateGraph()` (it declares no field): MODEL asks for `lookup`, whose
 * tool reads the order id from the state, as LangGraph's map-reduce workers do.
 */
function orderWorker(seen: unknown[]) {
  const lookup = tool({
    name: "lookup",
    description: "looks the branch's order up",
    schema: z.object({}),
    execute: (_args, ctx) => {
      const orderId = (ctx.state as Order).order_id;
      seen.push(orderId);
      return `order ${orderId} found`;
    },
  });
  return new StateGraph<Order>()
    .addNode("MODEL", (state) => callsTurn(`m-${state.order_id}`, [["lookup", {}]])())
    .addNode("TOOLS", new ToolNode<Order>([lookup]))
    .addEdge("MODEL", "TOOLS")
    .addEdge("TOOLS", END)
    .setEntryPoint("MODEL")
    .compile({ logger: recordingLogger() });
}

/** PLAN sends each order to the worker subgraph. */
function fanOut(worker: ReturnType<typeof orderWorker>, checkpointer: Checkpointer) {
  return new StateGraph()
    .addNode("PLAN", () => ({}))
    .addNode("worker", worker)
    .addConditionalEdges("PLAN", () =>
      ["o-1", "o-2"].map((order_id) => new Send("worker", { order_id })),
    )
    .addEdge("worker", END)
    .setEntryPoint("PLAN")
    .compile({ checkpointer, logger: recordingLogger() });
}

describe("Send to a subgraph", () => {
  it("hands the Send's fields to a child that declares none, and keeps them out of the parent", async () => {
    const seen: unknown[] = [];
    const store = new InMemoryCheckpointer();
    const app = fanOut(orderWorker(seen), store);

    const result = await app.invoke({ messages: [] }, { threadId: "t" });

    expect(result.status).toBe("completed");
    expect(seen.sort()).toEqual(["o-1", "o-2"]);
    expect(result.state.messages.filter((m) => m.role === "tool").map(Message.text)).toEqual([
      "order o-1 found",
      "order o-2 found",
    ]);
    // The Send's input was the branch's, not the parent's: no field of it lands in the parent.
    expect(Object.keys(result.state)).toEqual(["messages"]);
    expect((await store.getCheckpoint("t|worker:0@1"))?.values).toEqual({ order_id: "o-1" });
    expect((await store.getCheckpoint("t|worker:1@1"))?.values).toEqual({ order_id: "o-2" });
  });

  it("starts the child with the same input when the parent's step runs again after its start write was lost", async () => {
    const seen: unknown[] = [];
    const store = new InMemoryCheckpointer();
    // The first start write of a child thread fails, as a crash between the parent's step
    // write and the child's first write would leave it: the child has no thread yet.
    let failures = 1;
    const failing = new Proxy(store, {
      get(target, name) {
        const value: unknown = Reflect.get(target, name);
        if (typeof value !== "function") return value;
        if (name !== "putCheckpoint") return (value as () => unknown).bind(target);
        return (write: { threadId: string }) => {
          if (write.threadId.includes("|worker") && failures-- > 0) {
            return Promise.reject(new Error("lost the child's start write"));
          }
          return (value as (w: unknown) => Promise<number>).call(target, write);
        };
      },
    });
    const app = fanOut(orderWorker(seen), failing);

    const failed = await settle(app.invoke({ messages: [] }, { threadId: "t" }));
    expect(failed.ok).toBe(false);
    const continued = await app.invoke(null, { threadId: "t" });

    expect(continued.status).toBe("completed");
    // Each child got its order from the Send read back from the parent's step write.
    expect(seen.sort()).toEqual(["o-1", "o-2"]);
    expect((await store.getCheckpoint("t|worker:0@1"))?.values).toEqual({ order_id: "o-1" });
    expect((await store.getCheckpoint("t|worker:1@1"))?.values).toEqual({ order_id: "o-2" });
  });
});
