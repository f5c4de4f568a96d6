import { describe, expect, it } from "vitest";
import { z } from "zod";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { collectEvents, ofType } from "../support/helpers.js";
import { isRemoteTool, isRemoteToolCall, remoteTool, type RemoteToolCall } from "./remote-tool.js";
import { ToolNode } from "./tool-node.js";
import { tool } from "./tool.js";

const lookup = tool({
  name: "lookup_order",
  description: "Look up an order.",
  schema: z.object({}),
  execute: () => "order 7: 42 USD",
});

/** MAIN asks for `calls` (name, args) once, then says what the tools answered. */
function graphCalling(calls: [string, object][], node = new ToolNode([lookup])) {
  const model = (state: BaseState) =>
    state.messages.at(-1)?.role === "tool"
      ? Message.assistant(
          state.messages
            .filter((m) => m.role === "tool")
            .map((m) => Message.text(m))
            .join(" | "),
        )
      : Message.assistant(
          "",
          calls.map(([name, args], i) => ({
            id: `call_${i + 1}`,
            name,
            arguments: JSON.stringify(args),
          })),
        );
  const graph = new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", node)
    .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer: new InMemoryCheckpointer() });
  return { graph, node };
}

describe("remote tools", () => {
  it("pauses on a call to an attached remote tool and completes it with the caller's result", async () => {
    const node = new ToolNode([lookup]);
    node.attachRemoteTools([
      { name: "get_location", description: "", parameters: { type: "object" } },
    ]);
    expect(node.tools.map((t) => [t.name, isRemoteTool(t)])).toEqual([
      ["lookup_order", false],
      ["get_location", true],
    ]);
    const { graph } = graphCalling(
      [
        ["lookup_order", {}],
        ["get_location", { precise: true }],
      ],
      node,
    );
    const threadId = "remote-1";
    const paused = await graph.invoke({ messages: [Message.user("where?")] }, { threadId });
    expect(paused.status).toBe("interrupted");
    expect(paused.interrupts).toHaveLength(1);
    const asked = paused.interrupts[0]!;
    expect(isRemoteToolCall(asked.value)).toBe(true);
    expect(asked.value).toEqual({
      kind: "remote_tool_call",
      toolCallId: "call_2",
      name: "get_location",
      args: { precise: true },
    } satisfies RemoteToolCall);
    expect(asked.message).toBe("Remote tool call - graph interrupted");

    const done = await graph.invoke(
      { resume: { role: "tool", content: "Berlin" }, interruptId: asked.id },
      { threadId },
    );
    expect(done.status).toBe("completed");
    expect(Message.text(done.state.messages.at(-1)!)).toBe("order 7: 42 USD | Berlin");
    const ledger = await graph.getToolLedger({ threadId });
    expect(ledger.map((e) => [e.toolName, e.status])).toEqual([
      ["lookup_order", "completed"],
      ["get_location", "completed"],
    ]);
  });

  it("asks each remote call once: a recorded result replays while another call still waits", async () => {
    const node = new ToolNode([lookup]);
    node.attachRemoteTools([{ name: "ask_user" }]);
    const { graph } = graphCalling(
      [
        ["ask_user", { q: "a" }],
        ["ask_user", { q: "b" }],
      ],
      node,
    );
    const threadId = "remote-2";
    const paused = await graph.invoke({ messages: [Message.user("ask")] }, { threadId });
    expect(paused.interrupts.map((i) => (i.value as RemoteToolCall).args)).toEqual([
      { q: "a" },
      { q: "b" },
    ]);
    const [first, second] = paused.interrupts;
    const half = await graph.invoke(
      { resume: { role: "tool", content: "A", isError: true }, interruptId: first!.id },
      { threadId },
    );
    expect(half.status).toBe("interrupted");
    expect(half.interrupts.map((i) => i.id)).toEqual([second!.id]);

    const { events } = await collectEvents(
      graph.stream({ resume: "B", interruptId: second!.id }, { threadId }),
    );
    const results = ofType(events, "tool_result").map((e) => [e.toolCallId, e.replayed]);
    expect(results).toEqual([
      ["call_1", true],
      ["call_2", false],
    ]);
    const tools = (await graph.getState({ threadId }))!.values.messages.filter(
      (m) => m.role === "tool",
    );
    expect(tools.map((m) => [Message.text(m), m.role === "tool" && m.isError === true])).toEqual([
      ["A", true],
      ["B", false],
    ]);
  });

  it("takes remote tools for one run from the config; a node's own tool of that name wins", async () => {
    const { graph } = graphCalling([
      ["lookup_order", {}],
      ["pick_color", {}],
    ]);
    const threadId = "remote-3";
    const config = {
      threadId,
      remoteTools: [{ name: "pick_color" }, { name: "lookup_order" }],
    };
    const paused = await graph.invoke({ messages: [Message.user("color?")] }, config);
    expect(paused.interrupts.map((i) => (i.value as RemoteToolCall).name)).toEqual(["pick_color"]);
    const done = await graph.invoke(
      { resume: "blue", interruptId: paused.interrupts[0]!.id },
      config,
    );
    expect(Message.text(done.state.messages.at(-1)!)).toBe("order 7: 42 USD | blue");

    // Without the run's remote tools, the same call is an unknown tool.
    const other = graphCalling([["pick_color", {}]]).graph;
    const r = await other.invoke({ messages: [Message.user("color?")] }, { threadId: "remote-4" });
    expect(Message.text(r.state.messages[2]!)).toContain("TOOL_NOT_FOUND_001");
  });

  it("refuses bad specs with clear errors", async () => {
    expect(() => remoteTool({ name: "has space" })).toThrow(/name must be/);
    expect(() => new ToolNode([lookup]).attachRemoteTools([{ name: "lookup_order" }])).toThrow(
      /own tools/,
    );
    const { graph } = graphCalling([["x", {}]]);
    await expect(
      graph.invoke(
        { messages: [Message.user("hi")] },
        {
          remoteTools: [{ name: "a" }, { name: "a" }],
        },
      ),
    ).rejects.toMatchObject({ code: "INPUT_001", message: /two tools are named 'a'/ });
    await expect(
      graph.invoke(
        { messages: [Message.user("hi")] },
        {
          remoteTools: [{ name: "ok", parameters: [] as never }],
        },
      ),
    ).rejects.toMatchObject({ code: "INPUT_001", message: /JSON Schema object/ });
  });
});
