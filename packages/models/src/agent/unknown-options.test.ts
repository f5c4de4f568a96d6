import { END, StateGraph } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { createReactAgent } from "../react/create-react-agent.js";
import { createSupervisor } from "../supervisor/create-supervisor.js";
import { Agent } from "./agent.js";

const model = "openai/gpt-4o-mini";

/** LangGraph.js's createReactAgent options that tenxgraph names otherwise, or lacks (issue 27). */
describe("agent builders refuse options they do not know", () => {
  it.each([
    { option: { stateModifier: "Be brief." }, says: "Use 'systemPrompt'" },
    { option: { llm: model }, says: "Use 'model'" },
    { option: { postModelHook: () => ({}) }, says: "Not supported yet" },
    { option: { interruptBefore: ["TOOL"] }, says: "pass compile: { interruptBefore }" },
    { option: { store: {} }, says: "'store' is an option of compile(): pass compile: { store }" },
    { option: { checkpointSaver: {} }, says: "Use 'checkpointer'" },
    { option: { logger: {} }, says: "pass compile: { logger }" },
    { option: { systemPromt: "typo" }, says: "Known options: model, systemPrompt," },
  ])("createReactAgent() refuses $option with OPTION_001", ({ option, says }) => {
    const name = Object.keys(option)[0]!;
    expect(() => createReactAgent({ model, tools: [], ...option } as never)).toThrow(
      expect.objectContaining({
        code: "OPTION_001",
        option: name,
        message: expect.stringContaining(says),
      }),
    );
  });

  it("new Agent() and createSupervisor() refuse them too; known options still build", () => {
    expect(() => new Agent({ model, stateModifier: "x" } as never)).toThrow(
      "new Agent(): unknown option 'stateModifier'. Use 'systemPrompt'",
    );
    expect(() => new Agent({ model, checkpointer: {} } as never)).toThrow(
      "give the checkpointer to the graph's compile()",
    );
    const worker = new StateGraph()
      .addNode("W", () => ({}))
      .addEdge("W", END)
      .setEntryPoint("W")
      .compile();
    const agents = [{ name: "billing", description: "Billing", graph: worker }];
    expect(() => createSupervisor({ model, agents, tools: [] } as never)).toThrow(
      "createSupervisor(): unknown option 'tools'",
    );
    expect(() => createSupervisor({ model, agents, systemPrompt: "Route." })).not.toThrow();
    expect(() =>
      createReactAgent({ model, tools: [], systemPrompt: "Be brief.", compile: {} }),
    ).not.toThrow();
  });
});
