import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { InvalidRunError, NodeOutputError } from "../errors/errors.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { tool } from "../tools/tool.js";
import { ToolNode } from "../tools/tool-node.js";
import type { CompiledGraph } from "./compiled-graph.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "./state-graph.js";
import type { StateOf } from "../definition/state-schema.js";

const Cart = z.object({
  total: z.number().default(0),
  tags: z.array(z.string()).default([]),
  note: z.string().optional(),
});
type CartState = BaseState & { total: number; tags: string[]; note?: string | undefined };

const quiet = { checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() };

describe("typed state: types", () => {
  it("infers the state from a zod object, for nodes, reducers and routers", () => {
    const graph = new StateGraph(Cart, {
      reducers: {
        total: (current, update) => {
          expectTypeOf(current).toEqualTypeOf<number>();
          return current + update;
        },
        tags: (current, update) => [...current, ...update],
      },
    });
    expectTypeOf(graph).toEqualTypeOf<StateGraph<CartState>>();
    expectTypeOf<StateOf<typeof Cart>>().toEqualTypeOf<CartState>();

    const app = graph
      .addNode("ADD", (state) => {
        expectTypeOf(state).toEqualTypeOf<CartState>();
        expectTypeOf(state.messages).toEqualTypeOf<Message[]>();
        return { total: 1, tags: ["added"] };
      })
      .addNode("DONE", () => undefined)
      .addConditionalEdges("ADD", (state) => {
        expectTypeOf(state.total).toEqualTypeOf<number>();
        return state.total > 2 ? "DONE" : "ADD";
      })
      .addEdge("DONE", END)
      .setEntryPoint("ADD")
      .compile(quiet);
    expectTypeOf(app).toEqualTypeOf<CompiledGraph<CartState>>();
  });

  it("refuses a field's wrong type in an update, a reducer or initialState", () => {
    new StateGraph(Cart, {
      // @ts-expect-error -- a reducer of `tags` works on string[]
      reducers: { tags: (current: number, update: number) => current + update },
      // @ts-expect-error -- `total` is a number
      initialState: { total: "0" },
    });
    // @ts-expect-error -- `total` is a number
    new StateGraph(Cart).addNode("A", () => ({ total: "1" }));
  });

  it("types a tool's ctx.state through ToolNode", () => {
    const Sku = z.object({ sku: z.string() });
    // A tool defined on its own names its state; inside `new ToolNode<S>([...])` it is inferred.
    const addToCart = tool<typeof Sku, CartState>({
      name: "add_to_cart",
      description: "Add an item",
      schema: Sku,
      execute(args, ctx) {
        expectTypeOf(ctx.state).toEqualTypeOf<CartState>();
        ctx.update({ total: 1, tags: [args.sku] });
        // @ts-expect-error -- `total` is a number
        ctx.update({ total: "1" });
        return "added";
      },
    });
    const inline = new ToolNode<CartState>([
      tool({
        name: "clear",
        description: "Empty the cart",
        schema: z.object({}),
        execute(_args, ctx) {
          expectTypeOf(ctx.state).toEqualTypeOf<CartState>();
          return "cleared";
        },
      }),
    ]);
    new StateGraph(Cart).addNode("TOOL", new ToolNode([addToCart])).addNode("CLEAR", inline);
    // Written inside addNode, the graph's state flows into ToolNode and tool() with no type argument.
    new StateGraph(Cart).addNode(
      "REFUND",
      new ToolNode([
        tool({
          name: "refund",
          description: "Refund the cart",
          schema: Sku,
          execute(_args, ctx) {
            expectTypeOf(ctx.state).toEqualTypeOf<CartState>();
            ctx.update({ total: -ctx.state.total });
            return "refunded";
          },
        }),
      ]),
    );
  });

  it("fails type-checking on a node name never added; END is always allowed", () => {
    const graph = new StateGraph(Cart)
      .addNode("MAIN", () => undefined)
      .addNode("TOOL", () => undefined);
    expectTypeOf(graph).toEqualTypeOf<StateGraph<CartState, "MAIN" | "TOOL">>();
    graph.addEdge("TOOL", "MAIN").addEdge("MAIN", END).setEntryPoint("MAIN");
    // @ts-expect-error -- "TOOLZ" was never added
    graph.addEdge("MAIN", "TOOLZ");
    // @ts-expect-error -- "MIAN" was never added
    graph.addEdge("MIAN", "TOOL");
    // @ts-expect-error -- "MIAN" was never added
    graph.setEntryPoint("MIAN");
    // @ts-expect-error -- the router may return "TOOLZ", never added
    graph.addConditionalEdges("MAIN", (s) => (s.total > 0 ? "TOOLZ" : END));
    // @ts-expect-error -- the path map leads to "TOOLZ", never added
    graph.addConditionalEdges("MAIN", () => "go", { go: "TOOLZ", stop: END });
    // @ts-expect-error -- the path map leads to "TOOLZ", never added
    graph.addConditionalEdges("MAIN", () => "TOOL", ["TOOLZ", END]);
    // @ts-expect-error -- the router returns "left", not a key of the path map
    graph.addConditionalEdges("MAIN", () => "left", { go: "TOOL", stop: END });
    // @ts-expect-error -- the router returns "MAIN", not in the path map
    graph.addConditionalEdges("MAIN", (s) => (s.total ? "MAIN" : "TOOL"), ["TOOL", END]);
    graph.addConditionalEdges("MAIN", (s) => (s.total > 0 ? "TOOL" : END));
    graph.addConditionalEdges("MAIN", (s) => (s.total ? "TOOL" : END), ["TOOL", END]);
    graph.addConditionalEdges("MAIN", (s) => (s.total ? "go" : "stop"), { go: "TOOL", stop: END });
    graph.addConditionalEdges("MAIN", () => "go", { go: "TOOL", stop: END });
  });

  it("accepts widened names: a graph built in a loop, a router returning string", () => {
    const names: string[] = ["A", "B"];
    const graph = new StateGraph();
    for (const name of names) graph.addNode(name, () => undefined);
    graph.addEdge("A", "B").setEntryPoint(names[0]!);
    const first = names[0]!;
    const chained = new StateGraph().addNode(first, () => undefined);
    expectTypeOf(chained).toEqualTypeOf<StateGraph<BaseState & Record<string, unknown>, string>>();
    chained.addEdge(first, "anything: compile() checks it").setEntryPoint("B");
    const route = (state: BaseState): string => (state.messages.length ? "A" : END);
    new StateGraph().addNode("A", () => undefined).addConditionalEdges("A", route);
    // Untyped graphs keep working statement by statement, as before.
    const plain = new StateGraph<CartState>();
    plain.addNode("X", () => undefined);
    plain.addEdge("X", END);
    expectTypeOf(plain).toEqualTypeOf<StateGraph<CartState>>();
  });
});

describe("typed state: run time", () => {
  const app = () =>
    new StateGraph(Cart, { reducers: { total: (a, b) => a + b } })
      .addNode("ADD", (state) => ({ total: 2, tags: [...state.tags, "x"] }))
      .addEdge("ADD", END)
      .setEntryPoint("ADD")
      .compile(quiet);

  it("starts a thread from the schema's defaults, under initialState", async () => {
    const result = await app().invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    expect(result.state).toMatchObject({ total: 2, tags: ["x"] });
    expect(result.state).not.toHaveProperty("note");
    const seeded = new StateGraph(Cart, { initialState: { total: 10 } })
      .addNode("A", () => undefined)
      .addEdge("A", END)
      .setEntryPoint("A")
      .compile(quiet);
    expect((await seeded.invoke({}, { threadId: "s" })).state).toMatchObject({
      total: 10,
      tags: [],
    });
  });

  it("INPUT_001 for an input that breaks the schema, naming the field; nothing written", async () => {
    const graph = app();
    const error = await graph
      .invoke({ total: "5" } as never, { threadId: "bad" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRunError);
    expect(error).toMatchObject({ code: "INPUT_001" });
    expect((error as Error).message).toMatch(/total: .*expected number/);
    expect(await graph.getState({ threadId: "bad" })).toBeNull();
  });

  it("NODE_OUTPUT_001 for a node update that breaks the schema, naming node and field", async () => {
    const graph = new StateGraph(Cart)
      .addNode("BAD", () => ({ tags: [1] }) as never)
      .addEdge("BAD", END)
      .setEntryPoint("BAD")
      .compile(quiet);
    const error = await graph.invoke({}, { threadId: "t" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeOutputError);
    expect(error).toMatchObject({ code: "NODE_OUTPUT_001", node: "BAD" });
    expect((error as Error).message).toMatch(/tags\.0: .*expected string/);
  });

  it("refuses a schema with `messages`, or one that is not a zod object", () => {
    expect(() => new StateGraph(z.object({ messages: z.array(z.string()) }))).toThrow(
      /leave `messages` out/,
    );
    expect(() => new StateGraph(z.string() as never)).toThrow(/must be a zod object/);
  });
});
