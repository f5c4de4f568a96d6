import { describe, expect, it } from "vitest";
import { z } from "zod";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { Send } from "../definition/send.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import {
  callsTurn,
  RecordingCheckpointer,
  recordingLogger,
  settle,
  toolMessages,
} from "../support/helpers.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";

interface Regions extends BaseState {
  region?: string;
}

/**
 * MODEL asks for one `charge` call; its router sends the call's message to TOOLS twice, once
 * per region, and to FLAKY, which fails `failures` times: the two TOOLS branches run the same
 * call of the same message, which only their namespaces tell apart.
 */
function twoRegions(store: RecordingCheckpointer, failures: { left: number }) {
  const charged: string[] = [];
  const charge = tool({
    name: "charge",
    description: "Charges in the branch's region",
    schema: z.object({}),
    execute: (_args, ctx) => {
      const region = (ctx.state as Regions).region!;
      charged.push(region);
      return `charged in ${region}`;
    },
  });
  const app = new StateGraph<Regions>()
    .addNode("MODEL", () => callsTurn("m-1", [["charge", {}]])())
    .addNode("TOOLS", new ToolNode<Regions>([charge]))
    .addNode("FLAKY", () => {
      if (failures.left-- > 0) throw new Error("flaky branch");
    })
    .addConditionalEdges("MODEL", () => [
      new Send("TOOLS", { region: "eu" }),
      new Send("TOOLS", { region: "us" }),
      "FLAKY",
    ])
    .addEdge("TOOLS", END)
    .addEdge("FLAKY", END)
    .setEntryPoint("MODEL")
    .compile({ checkpointer: store, logger: recordingLogger() });
  return { app, charged };
}

describe("ledger keys of parallel branches", () => {
  it("keys the same call of two Send branches apart (namespace + message id + call id)", async () => {
    const store = new RecordingCheckpointer();
    const { app, charged } = twoRegions(store, { left: 0 });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t" });

    expect(result.status).toBe("completed");
    expect(charged.sort()).toEqual(["eu", "us"]);
    const ledger = await app.getToolLedger({ threadId: "t" });
    expect(ledger.map((entry) => [entry.key, entry.status]).sort()).toEqual([
      ["TOOLS:0|m-1:call_1", "completed"],
      ["TOOLS:1|m-1:call_1", "completed"],
    ]);
    // Both claims rode ahead in MODEL's step write, under the keys the branches then used.
    expect(store.ledgerWrites[0]!.claims.map((claim) => claim.key)).toEqual([
      "TOOLS:0|m-1:call_1",
      "TOOLS:1|m-1:call_1",
    ]);
    expect(toolMessages(result.state).map((m) => Message.text(m))).toEqual([
      "charged in eu",
      "charged in us",
    ]);
  });

  it("replays each branch's recorded call when the step runs again after a sibling failed", async () => {
    const store = new RecordingCheckpointer();
    const { app, charged } = twoRegions(store, { left: 1 });

    const failed = await settle(app.invoke({ messages: [Message.user("go")] }, { threadId: "t" }));
    expect(failed.ok).toBe(false);
    expect(charged.sort()).toEqual(["eu", "us"]);

    const continued = await app.invoke(null, { threadId: "t" });

    expect(continued.status).toBe("completed");
    expect(charged).toHaveLength(2);
    expect(toolMessages(continued.state).map((m) => Message.text(m))).toEqual([
      "charged in eu",
      "charged in us",
    ]);
  });

  it("keeps the plain chain's keys unchanged: no namespace without a fan-out", async () => {
    const app = new StateGraph()
      .addNode("MODEL", () => callsTurn("m-1", [["echo", {}]])())
      .addNode(
        "TOOLS",
        new ToolNode([
          tool({ name: "echo", description: "echo", schema: z.object({}), execute: () => "hi" }),
        ]),
      )
      .addEdge("MODEL", "TOOLS")
      .addEdge("TOOLS", END)
      .setEntryPoint("MODEL")
      .compile({ logger: recordingLogger() });
    await app.invoke({ messages: [] }, { threadId: "t" });
    expect((await app.getToolLedger({ threadId: "t" })).map((e) => e.key)).toEqual(["m-1:call_1"]);
  });
});
