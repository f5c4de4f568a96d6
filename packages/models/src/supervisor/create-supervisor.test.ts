import { END, Message, StateGraph, silentLogger, type BaseState } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { createSupervisor } from "./create-supervisor.js";

/** A worker that answers with its name. */
const echo = (name: string) =>
  new StateGraph<BaseState>()
    .addNode("MODEL", () => Message.assistant(`${name} here`))
    .addEdge("MODEL", END)
    .setEntryPoint("MODEL")
    .compile({ logger: silentLogger });

describe("createSupervisor", () => {
  it("refuses no workers, a reserved or repeated name, and a name a tool cannot carry", () => {
    const graph = echo("a");
    const build = (names: string[]) =>
      createSupervisor({
        model: () => Message.assistant("hi"),
        agents: names.map((name) => ({ name, description: name, graph })),
      });
    expect(() => build([])).toThrow(TypeError);
    expect(() => build(["SUPERVISOR"])).toThrow(/unique, and not SUPERVISOR or HANDOFF/);
    expect(() => build(["a", "a"])).toThrow(TypeError);
    expect(() => build(["has space"])).toThrow(TypeError);
  });

  it("runs the workers named by the handoff calls, then ends on a reply without calls", async () => {
    let turns = 0;
    const app = createSupervisor({
      model: () =>
        turns++ === 0
          ? Message.assistant("", [
              { id: "h-1", name: "transfer_to_b", arguments: "{}" },
              { id: "h-2", name: "transfer_to_a", arguments: "{}" },
            ])
          : Message.assistant("all done"),
      agents: [
        { name: "a", description: "first", graph: echo("a") },
        { name: "b", description: "second", graph: echo("b") },
      ],
      compile: { logger: silentLogger },
    });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });

    // Both workers ran in one step, merged in the order the supervisor named them.
    expect(result.state.messages.map((m) => Message.text(m))).toEqual([
      "go",
      "",
      "Transferred to b",
      "Transferred to a",
      "b here",
      "a here",
      "all done",
    ]);
  });
});
