import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Command,
  END,
  InMemoryCheckpointer,
  Message,
  Send,
  StateGraph,
  ToolNode,
  silentLogger,
  tool,
  type BaseState,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { dropStore, freshStore } from "../support/fresh-store.js";
import { openStore, type StoreSpec } from "../support/store-spec.js";

/**
 * Paths the docs show, each run on every store as a user would write it (issue 27): a node that
 * removes a message, a `Send` to a subgraph, a tool that returns a `Command`.
 */
const KINDS = ["memory", "sqlite", "postgres"] as const;
type Kind = (typeof KINDS)[number];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A new empty store of `kind`, closed and removed after the test. */
function storeOf(kind: Kind, name: string): Checkpointer {
  if (kind === "memory") return new InMemoryCheckpointer();
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-documented-"));
  const spec: StoreSpec = freshStore(kind, name, dir);
  const store = openStore(spec);
  cleanups.push(async () => {
    await store.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

interface Order extends BaseState {
  order_id?: string;
}

describe.each(KINDS)("documented paths on %s", (kind) => {
  it("a node removes a message and adds one (docs/history.md)", async () => {
    const app = new StateGraph()
      .addNode("SUMMARIZE", (state) => ({
        messages: [Message.remove(state.messages[0]!.id), Message.assistant("Summary")],
      }))
      .addEdge("SUMMARIZE", END)
      .setEntryPoint("SUMMARIZE")
      .compile({ checkpointer: storeOf(kind, "remove"), logger: silentLogger });
    const input = [Message.assistant("Old summary"), Message.user("Hi")];

    const result = await app.invoke({ messages: input }, { threadId: "t" });

    const texts = (messages: readonly Message[]) => messages.map((m) => Message.text(m));
    expect(texts(result.state.messages)).toEqual(["Hi", "Summary"]);
    expect(texts((await app.getState({ threadId: "t" }))!.values.messages)).toEqual([
      "Hi",
      "Summary",
    ]);
    // The version the run's input wrote still reads the removed message.
    const history = await app.getStateHistory({ threadId: "t" });
    const start = history.at(-1)!;
    const before = await app.getState({ threadId: "t", version: start.version });
    expect(texts(before!.values.messages)).toEqual(["Old summary", "Hi"]);
  });

  it("a node's removal of a message the thread does not hold is NODE_OUTPUT_001, and nothing is written", async () => {
    const app = new StateGraph()
      .addNode("SUMMARIZE", () => ({ messages: [Message.remove("no-such-id")] }))
      .addEdge("SUMMARIZE", END)
      .setEntryPoint("SUMMARIZE")
      .compile({ checkpointer: storeOf(kind, "remove_unknown"), logger: silentLogger });

    await expect(
      app.invoke({ messages: [Message.user("Hi")] }, { threadId: "t" }),
    ).rejects.toMatchObject({
      code: "NODE_OUTPUT_001",
      message: expect.stringContaining("no-such-id"),
    });

    const history = await app.getStateHistory({ threadId: "t" });
    expect(history.filter((version) => version.node === "SUMMARIZE")).toEqual([]);
    expect((await app.getState({ threadId: "t" }))!.values.messages).toHaveLength(1);
  });

  it("Send('worker', { order_id }) reaches a subgraph built with new StateGraph()", async () => {
    const seen: unknown[] = [];
    const lookup = tool({
      name: "lookup",
      description: "looks the branch's order up",
      schema: z.object({}),
      execute: (_args, ctx) => {
        seen.push((ctx.state as Order).order_id);
        return `order ${(ctx.state as Order).order_id} found`;
      },
    });
    const worker = new StateGraph<Order>()
      .addNode("MODEL", (state) => ({
        ...Message.assistant("", [{ id: "call_1", name: "lookup", arguments: "{}" }]),
        id: `m-${state.order_id}`,
      }))
      .addNode("TOOLS", new ToolNode<Order>([lookup]))
      .addEdge("MODEL", "TOOLS")
      .addEdge("TOOLS", END)
      .setEntryPoint("MODEL")
      .compile({ logger: silentLogger });
    const store = storeOf(kind, "send_subgraph");
    const app = new StateGraph()
      .addNode("PLAN", () => ({}))
      .addNode("worker", worker)
      .addConditionalEdges("PLAN", () =>
        ["o-1", "o-2"].map((order_id) => new Send("worker", { order_id })),
      )
      .addEdge("worker", END)
      .setEntryPoint("PLAN")
      .compile({ checkpointer: store, logger: silentLogger });

    const result = await app.invoke({ messages: [] }, { threadId: "t" });

    expect(result.status).toBe("completed");
    expect(seen.sort()).toEqual(["o-1", "o-2"]);
    expect((await store.getCheckpoint("t|worker:0@1"))?.values).toEqual({ order_id: "o-1" });
    expect((await store.getCheckpoint("t|worker:1@1"))?.values).toEqual({ order_id: "o-2" });
    expect(Object.keys((await app.getState({ threadId: "t" }))!.values)).toEqual(["messages"]);
  });

  it("a tool's new Command({ update }) updates the state, recorded with its result", async () => {
    const runs: string[] = [];
    const lookup = tool({
      name: "lookup_user",
      description: "looks the user up",
      schema: z.object({}),
      execute: (_args, ctx) => {
        runs.push(ctx.toolCallId);
        return new Command({
          update: { user_name: "Ada", messages: [Message.tool(ctx.toolCallId, "Found")] },
        });
      },
    });
    const app = new StateGraph<BaseState & { user_name?: string }>()
      .addNode("MODEL", () => ({
        ...Message.assistant("", [{ id: "call_1", name: "lookup_user", arguments: "{}" }]),
        id: "m-1",
      }))
      .addNode("TOOLS", new ToolNode([lookup]))
      .addEdge("MODEL", "TOOLS")
      .addEdge("TOOLS", END)
      .setEntryPoint("MODEL")
      .compile({ checkpointer: storeOf(kind, "tool_command"), logger: silentLogger });

    const result = await app.invoke({ messages: [Message.user("who?")] }, { threadId: "t" });

    expect(result.state.user_name).toBe("Ada");
    const stored = (await app.getState({ threadId: "t" }))!.values;
    expect(stored.user_name).toBe("Ada");
    expect(Message.text(stored.messages.at(-1)!)).toBe("Found");
    expect(await app.getToolLedger({ threadId: "t" })).toMatchObject([
      { status: "completed", result: { updates: [{ user_name: "Ada" }] } },
    ]);
    expect(runs).toEqual(["call_1"]);
  });
});
