import { describe, expect, it } from "vitest";
import { z } from "zod";
import { END, Message, StateGraph, ToolNode, tool } from "../index.js";
import { ScriptedModel, recordingLogger } from "../testing/index.js";
import { MessagesAnnotation, MessagesZodState, START, toolsCondition } from "./index.js";

const quiet = { logger: recordingLogger() };
let thread = 0;
const config = () => ({ threadId: `langgraph-${(thread += 1)}` });
const ask = (text: string) => ({ messages: [Message.user(text)] });

const getWeather = tool({
  name: "get_weather",
  description: "Weather of a city.",
  schema: z.object({ city: z.string() }),
  execute: ({ city }) => `sunny in ${city}`,
});

describe("@tenxgraph/core/langgraph: LangGraph.js's spellings", () => {
  it("START, toolsCondition and MessagesAnnotation build LangGraph.js's ReAct graph as written", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "get_weather", args: { city: "sf" } }] },
      "It is sunny in sf.",
    ]);
    const app = new StateGraph(MessagesAnnotation)
      .addNode("agent", model)
      .addNode("tools", new ToolNode([getWeather]))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", toolsCondition, ["tools", END])
      .addEdge("tools", "agent")
      .compile(quiet);
    const result = await app.invoke(ask("weather in sf?"), config());
    expect(result.status).toBe("completed");
    expect(result.state.messages.map((m) => Message.text(m))).toEqual([
      "weather in sf?",
      "",
      "sunny in sf",
      "It is sunny in sf.",
    ]);
  });

  it("toolsCondition takes the state or the messages, and maps to other node names", async () => {
    const calling = Message.assistant("", [{ id: "c1", name: "x", arguments: "{}" }]);
    expect(toolsCondition({ messages: [calling] })).toBe("tools");
    expect(toolsCondition([calling])).toBe("tools");
    expect(toolsCondition([Message.assistant("done")])).toBe(END);
    expect(toolsCondition({ messages: [] })).toBe(END);
    const app = new StateGraph()
      .addNode(
        "MAIN",
        new ScriptedModel([{ toolCalls: [{ name: "get_weather", args: { city: "nyc" } }] }, "ok"]),
      )
      .addNode("TOOL", new ToolNode([getWeather]))
      .addEdge(START, "MAIN")
      .addConditionalEdges("MAIN", toolsCondition, { tools: "TOOL", [END]: END })
      .addEdge("TOOL", "MAIN")
      .compile(quiet);
    expect((await app.invoke(ask("hi"), config())).state.messages).toHaveLength(4);
  });

  it("MessagesZodState extends with fields that are typed and checked", async () => {
    const State = MessagesZodState.extend({ city: z.string().default("nyc") });
    const app = new StateGraph(State)
      .addNode("reply", (state) => Message.assistant(`weather in ${state.city}`))
      .addEdge(START, "reply")
      .addEdge("reply", END)
      .compile(quiet);
    const result = await app.invoke(ask("hi"), config());
    expect(result.state.city).toBe("nyc");
    expect(Message.text(result.state.messages.at(-1)!)).toBe("weather in nyc");
    await expect(app.invoke({ ...ask("hi"), city: 3 } as never, config())).rejects.toMatchObject({
      code: "INPUT_001",
    });
    // Any other `messages` field is still refused: the runtime owns the transcript.
    expect(() => new StateGraph(z.object({ messages: z.array(z.string()) }))).toThrow(
      "leave `messages` out of the state schema, or extend MessagesZodState",
    );
  });

  it("addSequence adds nodes in order with an edge from each to the next", async () => {
    const order: string[] = [];
    const step = (name: string) => () => {
      order.push(name);
      return {};
    };
    const app = new StateGraph()
      .addSequence([
        ["a", step("a")],
        ["b", step("b")],
      ])
      .addSequence({ c: step("c"), d: step("d") })
      .addEdge(START, "a")
      .addEdge("b", "c")
      .addEdge("d", END)
      .compile(quiet);
    await app.invoke(ask("go"), config());
    expect(order).toEqual(["a", "b", "c", "d"]);
    expect(() => new StateGraph().addSequence([])).toThrow("addSequence needs at least one node");
  });

  it("one entry point: a START edge to a second node is GRAPH_002; START is no node name", () => {
    const graph = new StateGraph()
      .addNode("a", () => ({}))
      .addNode("b", () => ({}))
      .addEdge(START, "a")
      .addEdge(START, "a");
    expect(() => graph.addEdge(START, "b")).toThrow(
      expect.objectContaining({
        code: "GRAPH_002",
        message: expect.stringContaining("the graph already starts at 'a'"),
      }),
    );
    expect(() => new StateGraph().addNode(START, () => ({}))).toThrow(
      expect.objectContaining({ code: "GRAPH_003" }),
    );
  });
});
