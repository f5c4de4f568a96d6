import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FAULT_POINTS } from "../node/fault-points.js";
import { FaultPoints } from "../testing/fault-points.js";
import { recordingLogger } from "../support/helpers.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";
import { Command } from "../definition/command.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "./state-graph.js";

interface Team extends BaseState {
  activeAgent: string;
}

/** A child that calls a handoff tool, which sends the parent to `to` (counting its runs). */
function handingChild(to: string, ran: { tool: number }) {
  const handoff = tool({
    name: `transfer_to_${to}`,
    description: `Hand over to ${to}`,
    schema: z.object({}),
    execute: (_args, ctx) => {
      ran.tool += 1;
      return new Command({
        graph: Command.PARENT,
        goto: to,
        update: {
          activeAgent: to,
          messages: [Message.tool(ctx.toolCallId, `Transferred to ${to}`)],
        },
      });
    },
  });
  return new StateGraph<Team>({ initialState: { activeAgent: "" } })
    .addNode("MODEL", () =>
      Message.assistant("", [{ id: "h-1", name: handoff.name, arguments: "{}" }]),
    )
    .addNode("TOOLS", new ToolNode([handoff]))
    .addEdge("MODEL", "TOOLS")
    .addEdge("TOOLS", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ logger: recordingLogger() });
}

function team(child: ReturnType<typeof handingChild>, faults?: FaultPoints) {
  const store = new InMemoryCheckpointer();
  const ran = { bob: 0 };
  const app = new StateGraph<Team>({ initialState: { activeAgent: "alice" } })
    .addNode("alice", child, { ends: ["bob"] })
    .addNode("bob", (state) => {
      ran.bob += 1;
      return Message.assistant(`bob here (active: ${state.activeAgent})`);
    })
    .addEdge("bob", END)
    .setEntryPoint("alice")
    .compile({ checkpointer: store, logger: recordingLogger(), faultPoints: faults });
  return { app, store, ran };
}

describe("handoffs (Command.PARENT)", () => {
  it("ends the child and sends the parent where the child's tool said, with its update", async () => {
    const ran = { tool: 0 };
    const { app, store } = team(handingChild("bob", ran));

    const result = await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });

    expect(result.status).toBe("completed");
    expect(result.state.activeAgent).toBe("bob");
    expect(result.state.messages.map((m) => Message.text(m))).toEqual([
      "hi",
      "",
      "Transferred to bob",
      "bob here (active: bob)",
    ]);
    // The handoff is the child's last write: the child completed there, its call in its ledger.
    const child = await store.getCheckpoint("t|alice@0");
    expect(child).toMatchObject({ status: "completed", handoff: { goto: ["bob"] } });
    expect(ran.tool).toBe(1);
  });

  it("from a node: applies its update in the child, then routes the parent", async () => {
    const child = new StateGraph<Team>({ initialState: { activeAgent: "" } })
      .addNode(
        "ROUTE",
        () =>
          new Command({
            graph: Command.PARENT,
            goto: "bob",
            update: { activeAgent: "bob", messages: [Message.assistant("over to bob")] },
          }),
      )
      .addEdge("ROUTE", END)
      .setEntryPoint("ROUTE")
      .compile({ logger: recordingLogger() });
    const { app } = team(child as ReturnType<typeof handingChild>);

    const result = await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });

    expect(result.state.messages.map((m) => Message.text(m))).toEqual([
      "hi",
      "over to bob",
      "bob here (active: bob)",
    ]);
  });

  it("replays a parent step whose child already handed off: same route, no tool run again", async () => {
    const ran = { tool: 0 };
    const faults = new FaultPoints();
    // The parent "dies" right after the child's last write, before its own step is written.
    faults.arm(
      FAULT_POINTS.STEP_AFTER_WRITE,
      () => {
        throw new Error("crash after the child's last write");
      },
      { when: (at) => at.threadId === "t|alice@0" && at.node === "END", times: 1 },
    );
    const { app, store, ran: parentRan } = team(handingChild("bob", ran), faults);

    await expect(app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" })).rejects.toThrow(
      /crash after the child's last write/,
    );
    expect((await store.getCheckpoint("t"))?.currentNode).toBe("alice");
    expect(parentRan.bob).toBe(0);

    const result = await app.invoke(null, { threadId: "t" });

    expect(result.status).toBe("completed");
    expect(result.state.activeAgent).toBe("bob");
    expect(ran.tool).toBe(1);
    expect(parentRan.bob).toBe(1);
  });

  it("refuses a handoff from a top-level graph with GRAPH_010, writing nothing of the step", async () => {
    const store = new InMemoryCheckpointer();
    const app = new StateGraph()
      .addNode("A", () => new Command({ graph: Command.PARENT, goto: "B" }))
      .addEdge("A", END)
      .setEntryPoint("A")
      .compile({ checkpointer: store, logger: recordingLogger() });

    await expect(
      app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" }),
    ).rejects.toMatchObject({ code: "GRAPH_010" });
    expect((await store.getCheckpoint("t"))?.step).toBe(0);
  });

  it("refuses a handoff to a node the parent lacks, or to nowhere, with GRAPH_011", async () => {
    const { app } = team(handingChild("carol", { tool: 0 }));
    await expect(
      app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" }),
    ).rejects.toMatchObject({ code: "GRAPH_011", message: expect.stringMatching(/'carol'/) });

    const nowhere = new StateGraph()
      .addNode("A", () => new Command({ graph: Command.PARENT }))
      .addEdge("A", END)
      .setEntryPoint("A")
      .compile({ logger: recordingLogger() });
    const parent = new StateGraph()
      .addNode("W", nowhere)
      .addEdge("W", END)
      .setEntryPoint("W")
      .compile({ logger: recordingLogger() });
    await expect(
      parent.invoke({ messages: [Message.user("hi")] }, { threadId: "u" }),
    ).rejects.toMatchObject({ code: "GRAPH_011" });
  });
});
