/**
 * The threads a store made by an earlier release holds, and the graphs that made them: the
 * fixtures in `fixtures/` were written by `make-release-fixtures.ts` with the release named in
 * {@link FIXTURE_RELEASE}, and the upgrade tests reopen them with today's code, read them, and
 * continue their runs with the same graphs.
 */
import { END, Message, StateGraph, interrupt, tool } from "@tenxgraph/core";
import type { BaseState, CompiledGraph } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";

/** State with any fields, as the fixtures' graphs keep it. */
type State = BaseState & Record<string, unknown>;
import { ScriptedModel, recordingLogger } from "@tenxgraph/core/testing";
import { ToolNode } from "@tenxgraph/core";
import { z } from "zod";

/** The commit of the release that wrote the fixtures (main when issue 28 item 1 began). */
export const FIXTURE_RELEASE = "ecb1ce3";

/** The PostgreSQL schema the fixture's dump names; a test loads it under a name of its own. */
export const FIXTURE_SCHEMA = "txg_release_fixture";

/** A support run paused on charge_card's approval, its two sibling calls done and recorded. */
export const PAUSED_THREAD = "release-paused";
/** A fan-out whose ASK branch paused while WORK finished: the step's frontier is kept. */
export const FANOUT_THREAD = "release-fanout";
/** A run that completed, with a history of versions. */
export const DONE_THREAD = "release-done";

/** How many times each tool really ran, across every graph built on one counter. */
export type ToolRuns = Record<string, number>;

/** The support agent: MAIN (a scripted model) → TOOL (three calls, charge_card asks first). */
export function supportGraph(checkpointer: Checkpointer, runs: ToolRuns): CompiledGraph<State> {
  const ran = (name: string) => (runs[name] = (runs[name] ?? 0) + 1);
  const order = z.object({ order_id: z.string() });
  const tools = [
    tool({
      name: "lookup_order",
      description: "Find an order.",
      schema: order,
      execute: (args) => {
        ran("lookup_order");
        return `Order ${args.order_id}: 42.00 USD`;
      },
    }),
    tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: order,
      execute: (args) => {
        const answer = interrupt<{ approved: boolean }>(args, { message: "Charge?" });
        ran("charge_card");
        return answer.approved ? `Charged order ${args.order_id}` : "Declined";
      },
    }),
    tool({
      name: "send_receipt",
      description: "Email the receipt.",
      schema: order,
      execute: (args) => {
        ran("send_receipt");
        return `Receipt sent for order ${args.order_id}`;
      },
    }),
  ];
  const model = new ScriptedModel([
    {
      toolCalls: [
        { name: "lookup_order", args: { order_id: "4821" } },
        { name: "charge_card", args: { order_id: "4821" } },
        { name: "send_receipt", args: { order_id: "4821" } },
      ],
    },
    "Order 4821 is charged.",
  ]);
  return new StateGraph<State>()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode(tools))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls?.length ? "TOOL" : END;
    })
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: recordingLogger() });
}

/** START → PLAN → ASK and WORK in parallel → DONE (a join of both) → END. */
export function fanOutGraph(checkpointer: Checkpointer, runs: ToolRuns): CompiledGraph<State> {
  const ran = (name: string) => (runs[name] = (runs[name] ?? 0) + 1);
  return new StateGraph<State>()
    .addNode("PLAN", () => ({ planned: true }))
    .addNode("ASK", () => {
      const answer = interrupt<string>("Which colour?");
      ran("ASK");
      return { colour: answer };
    })
    .addNode("WORK", () => {
      ran("WORK");
      return { worked: true };
    })
    .addNode("DONE", () => {
      ran("DONE");
      return Message.assistant("done");
    })
    .addEdge("PLAN", "ASK")
    .addEdge("PLAN", "WORK")
    .addEdge(["ASK", "WORK"], "DONE")
    .addEdge("DONE", END)
    .setEntryPoint("PLAN")
    .compile({ checkpointer, logger: recordingLogger() });
}

/** Writes the three threads, as the release that made the fixtures did. */
export async function writeReleaseThreads(checkpointer: Checkpointer): Promise<void> {
  const runs: ToolRuns = {};
  const support = supportGraph(checkpointer, runs);
  await support.invoke(
    { messages: [Message.user("charge order 4821")] },
    { threadId: PAUSED_THREAD },
  );
  await fanOutGraph(checkpointer, runs).invoke({}, { threadId: FANOUT_THREAD });
  const done = supportGraph(checkpointer, runs);
  await done.invoke({ messages: [Message.user("charge order 4821")] }, { threadId: DONE_THREAD });
  await done.invoke({ resume: { approved: true } }, { threadId: DONE_THREAD });
}
