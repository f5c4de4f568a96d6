import { describe, expect, it } from "vitest";
import { z } from "zod";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import type { CompileOptions } from "../graph/compile-options.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";

interface State extends BaseState {
  note: string;
}

/** MODEL (asks for `charge`) → TOOLS → MODEL (answers) → END; counts the charges. */
function agent(options: CompileOptions = {}) {
  const charges: string[] = [];
  const charge = tool({
    name: "charge",
    description: "Charge the card",
    schema: z.object({ cents: z.number() }),
    execute: ({ cents }) => {
      charges.push(`charged ${cents}`);
      return `charged ${cents}`;
    },
  });
  const model = new ScriptedModel<State>([
    { toolCalls: [{ name: "charge", args: { cents: 4200 } }] },
    "Done",
  ]);
  const app = new StateGraph<State>({ initialState: { note: "" } })
    .addNode("MODEL", (state, ctx) => model.run(state, ctx))
    .addNode("TOOLS", new ToolNode<State>([charge]))
    .addConditionalEdges("MODEL", (s) => (s.messages.at(-1)?.toolCalls ? "TOOLS" : END), [
      "TOOLS",
      END,
    ])
    .addEdge("TOOLS", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger(), ...options });
  return { app, charges };
}

const input = () => ({ messages: [Message.user("charge me")] });

describe("static breakpoints", () => {
  it("interruptBefore pauses before the node, durably; invoke(null) runs it", async () => {
    const { app, charges } = agent({ interruptBefore: ["TOOLS"] });
    const paused = await app.invoke(input(), { threadId: "t" });
    expect(paused).toMatchObject({ status: "interrupted", interrupts: [], currentNode: "TOOLS" });
    expect(charges).toEqual([]);
    const state = await app.getState({ threadId: "t" });
    expect(state).toMatchObject({
      status: "interrupted",
      next: ["TOOLS"],
      breakpoint: { when: "before", nodes: ["TOOLS"], step: paused.step },
    });

    const done = await app.invoke(null, { threadId: "t" });
    expect(done.status).toBe("completed");
    expect(charges).toEqual(["charged 4200"]);
    expect(done.state.messages.at(-1)?.content).toBe("Done");
  });

  it("interruptAfter a tool node pauses once its calls are recorded in the ledger", async () => {
    const { app, charges } = agent({ interruptAfter: ["TOOLS"] });
    const paused = await app.invoke(input(), { threadId: "t" });
    expect(paused).toMatchObject({ status: "interrupted", interrupts: [], currentNode: "MODEL" });
    expect(charges).toEqual(["charged 4200"]);
    const ledger = await app.getToolLedger({ threadId: "t" });
    expect(ledger.map((entry) => [entry.toolName, entry.status])).toEqual([
      ["charge", "completed"],
    ]);
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      next: ["MODEL"],
      breakpoint: { when: "after", nodes: ["TOOLS"] },
    });

    const done = await app.invoke(null, { threadId: "t" });
    expect(done.status).toBe("completed");
    expect(charges, "the recorded call is not run again").toEqual(["charged 4200"]);
  });

  it("\"*\" pauses before every node; a run's config replaces the graph's breakpoints", async () => {
    const { app } = agent({ interruptBefore: "*" });
    const stops: (string | null)[] = [];
    let result = await app.invoke(input(), { threadId: "t" });
    while (result.status === "interrupted") {
      stops.push(result.currentNode);
      result = await app.invoke(null, { threadId: "t" });
    }
    expect(stops).toEqual(["MODEL", "TOOLS", "MODEL"]);

    const other = agent({ interruptBefore: "*" }).app;
    const free = await other.invoke(input(), { threadId: "u", interruptBefore: [] });
    expect(free.status).toBe("completed");
  });

  it("an edit while paused keeps the pause, and invoke(null) runs on the edited state", async () => {
    const { app } = agent({ interruptBefore: ["TOOLS"] });
    await app.invoke(input(), { threadId: "t" });
    await app.updateState({ threadId: "t" }, { note: "checked by a human" });
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "interrupted",
      breakpoint: { when: "before" },
    });
    const done = await app.invoke(null, { threadId: "t" });
    expect(done).toMatchObject({ status: "completed", state: { note: "checked by a human" } });
  });

  it("a resume answer at a breakpoint is RESUME_003", async () => {
    const { app } = agent({ interruptBefore: ["TOOLS"] });
    await app.invoke(input(), { threadId: "t" });
    await expect(app.invoke({ resume: "yes" }, { threadId: "t" })).rejects.toMatchObject({
      code: "RESUME_003",
      message: expect.stringContaining("invoke(null"),
    });
  });

  it("a node name the graph lacks is GRAPH_009, at compile() and in a run's config", async () => {
    expect(() => agent({ interruptBefore: ["TOOL"] })).toThrow(
      expect.objectContaining({ code: "GRAPH_009", message: expect.stringContaining("'TOOL'") }),
    );
    expect(() => agent({ interruptAfter: "all" as never })).toThrow(
      expect.objectContaining({ code: "GRAPH_009" }),
    );
    const { app } = agent();
    await expect(
      app.invoke(input(), { threadId: "t", interruptAfter: ["NOPE"] }),
    ).rejects.toMatchObject({ code: "GRAPH_009" });
    expect(await app.getState({ threadId: "t" })).toBeNull();
  });

  it("stream() pauses the same way, and ends with run_end interrupted", async () => {
    const { app } = agent({ interruptBefore: ["TOOLS"] });
    const types: string[] = [];
    for await (const event of app.stream(input(), { threadId: "t" })) types.push(event.type);
    expect(types.at(-1)).toBe("run_end");
    expect(types).not.toContain("interrupt");
    expect((await app.getState({ threadId: "t" }))?.status).toBe("interrupted");
  });
});
