import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Command } from "../definition/command.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { Send } from "../definition/send.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import { recordingLogger } from "../testing/recording-logger.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { callsTurn, toolText, withoutStepWrites } from "../support/helpers.js";
import { ToolNode } from "./tool-node.js";
import { tool } from "./tool.js";

interface Ticket extends BaseState {
  urgent: boolean;
  handledBy: string[];
}

/** LangGraph.js's habit: a tool hands the run to another node with `Command({ update, goto })`. */
function escalateTool(runs: string[], goto: (id: string) => Command["goto"]) {
  return tool<z.ZodObject<{ reason: z.ZodString }>, Ticket>({
    name: "escalate",
    description: "Hands the ticket to a human.",
    schema: z.object({ reason: z.string() }),
    execute: ({ reason }, ctx) => {
      runs.push(reason);
      return new Command({
        update: { urgent: true, messages: [Message.tool(ctx.toolCallId, "Escalated")] },
        goto: goto(ctx.toolCallId),
      });
    },
  });
}

function appOf(
  runs: string[],
  goto: (id: string) => Command["goto"],
  extra: { checkpointer?: Checkpointer; faultPoints?: FaultPoints } = {},
) {
  const human = (state: Ticket & { by?: string }) => ({ handledBy: [state.by ?? "human"] });
  return (
    new StateGraph<Ticket>({
      initialState: { urgent: false, handledBy: [] },
      reducers: { handledBy: (current: string[], update: string[]) => [...current, ...update] },
    })
      .addNode(
        "MAIN",
        new ScriptedModel<Ticket>([callsTurn("m-1", [["escalate", { reason: "refund" }]]), "ok"]),
      )
      // Routed only by its tools' `goto` (LangGraph.js's `ends`), or to MAIN when none says.
      .addNode("TOOL", new ToolNode([escalateTool(runs, goto)]), { ends: ["HUMAN", "MAIN"] })
      .addNode("HUMAN", human)
      .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
      .addEdge("HUMAN", END)
      .setEntryPoint("MAIN")
      .compile({ logger: recordingLogger(), ...extra })
  );
}

const ask = { messages: [Message.user("I want my money back")] };

describe("a tool that returns a Command with goto", () => {
  it("sends the run where it says, with its update, and records goto with the result", async () => {
    const runs: string[] = [];
    const app = appOf(runs, () => "HUMAN");
    const result = await app.invoke(ask, { threadId: "t" });
    expect(result.status).toBe("completed");
    expect(result.state).toMatchObject({ urgent: true, handledBy: ["human"] });
    expect(toolText(result.state, "call_1")).toBe("Escalated");
    // The model was not asked again: the run went to HUMAN, then ended.
    expect(result.state.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    const [entry] = await app.getToolLedger({ threadId: "t" });
    expect(entry).toMatchObject({ status: "completed", result: { goto: ["HUMAN"] } });
  });

  it("takes Sends: the node runs with their input", async () => {
    const app = appOf([], () => [
      new Send("HUMAN", { by: "Ada" }),
      new Send("HUMAN", { by: "Bo" }),
    ]);
    const result = await app.invoke(ask, { threadId: "t" });
    expect(result.state.handledBy).toEqual(["Ada", "Bo"]);
  });

  it("replays goto after a crash, without running the tool again", async () => {
    const runs: string[] = [];
    const checkpointer = withoutStepWrites(new InMemoryCheckpointer());
    const crash = new FaultPoints().arm(
      "ledger.after_record",
      () => {
        throw new Error("crashed after the record");
      },
      { times: 1 },
    );
    await expect(
      appOf(runs, () => "HUMAN", { checkpointer, faultPoints: crash }).invoke(ask, {
        threadId: "t",
      }),
    ).rejects.toThrow("crashed after the record");
    const continued = await appOf(runs, () => "HUMAN", { checkpointer }).invoke(null, {
      threadId: "t",
    });
    expect(runs).toEqual(["refund"]);
    expect(continued.state).toMatchObject({ urgent: true, handledBy: ["human"] });
  });

  it("a goto to a node the graph lacks fails the run with GRAPH_006; a bad goto is TOOL_COMMAND_001", async () => {
    await expect(appOf([], () => "NOWHERE").invoke(ask, { threadId: "t" })).rejects.toMatchObject({
      code: "GRAPH_006",
    });
    const app = appOf([], () => 42 as never);
    const result = await app.invoke(ask, { threadId: "t" });
    expect(toolText(result.state, "call_1")).toContain("[TOOL_COMMAND_001]");
    expect(toolText(result.state, "call_1")).toContain("whose goto is not a node name");
  });
});
