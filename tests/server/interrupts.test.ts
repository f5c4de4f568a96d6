import { z } from "zod";
import {
  END,
  interrupt,
  Message,
  StateGraph,
  ToolNode,
  silentLogger,
  tool,
  type BaseState,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { FaultPoints } from "@tenxgraph/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEffect } from "../support/effect-log.js";
import { STORES } from "../support/store-spec.js";
import { caller, isErrorEnvelope, ndjson, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/** MAIN asks a human before refunding; the answer is in the reply. */
function approvalGraph(checkpointer: Checkpointer) {
  return new StateGraph()
    .addNode("MAIN", () => {
      const answer = interrupt({ question: "refund 42 USD?" }, { message: "Approve the refund?" });
      return Message.assistant(`answer: ${JSON.stringify(answer)}`);
    })
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger }) as never;
}

/** charge_card asks a human when in doubt; the first run dies right after the charge returned. */
function inDoubtGraph(checkpointer: Checkpointer, effectLog: string) {
  const charge = tool({
    name: "charge_card",
    description: "Charge an order.",
    schema: z.object({ order_id: z.string() }),
    idempotencyKey: (args) => `order-${args.order_id}-charge`,
    onInDoubt: "interrupt",
    execute(args) {
      appendEffect(effectLog, { line: `charged order ${args.order_id}`, pid: process.pid });
      return "Charged 42 USD";
    },
  });
  const crash = new FaultPoints().arm(
    "tool.after_return",
    () => {
      throw new Error("server killed");
    },
    { times: 1 },
  );
  const model = (state: BaseState) =>
    state.messages.at(-1)?.role === "tool"
      ? Message.assistant(`done: ${Message.text(state.messages.at(-1)!)}`)
      : Message.assistant("", [
          { id: "call_1", name: "charge_card", arguments: '{"order_id":"5"}' },
        ]);
  return new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode([charge]))
    .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({
      checkpointer,
      faultPoints: crash,
      logger: silentLogger,
      stopPollIntervalMs: 250,
      claimStaleAfterMs: 1000,
    }) as never;
}

describe.each(STORES)("interrupts and in-doubt decisions on $label", ({ kind }) => {
  let approvals: TestServer;
  let doubts: TestServer;
  let ask: ReturnType<typeof caller>;
  let decide: ReturnType<typeof caller>;
  beforeAll(async () => {
    approvals = await startTestServer(kind, `interrupts_${kind}`, { build: approvalGraph });
    doubts = await startTestServer(kind, `in_doubt_${kind}`, {
      build: inDoubtGraph,
      app: { logger: silentLogger },
    });
    ask = caller(approvals.base, await tokenFor("alice"));
    decide = caller(doubts.base, await tokenFor("alice"));
  });
  afterAll(async () => {
    await approvals.close();
    await doubts.close();
  });

  it("reports an interrupt and takes its answer through invoke/stream with resume and interrupt_id", async () => {
    const paused = await ask("POST", "/v1/graph/invoke", {
      messages: [userMessage("refund me")],
      config: { thread_id: "r1" },
    });
    expect(paused.body.data.meta.status).toBe("interrupted");
    const [pending] = paused.body.data.meta.interrupts;
    expect(pending).toMatchObject({
      value: { question: "refund 42 USD?" },
      message: "Approve the refund?",
      node: "MAIN",
    });
    const state = (await ask("GET", "/v1/threads/r1/state")).body.data.state;
    expect(state.execution_meta).toMatchObject({
      status: "interrupted_after",
      interrupted_node: ["MAIN"],
    });

    const busy = await ask("POST", "/v1/graph/invoke", {
      messages: [userMessage("hello?")],
      config: { thread_id: "r1" },
    });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe("THREAD_002");
    const wrong = await ask("POST", "/v1/graph/stream", {
      resume: true,
      interrupt_id: "nope",
      config: { thread_id: "r1" },
    });
    expect(wrong.status).toBe(422);
    expect(isErrorEnvelope(wrong.body)).toBe(true);

    const resumed = await ask("POST", "/v1/graph/stream", {
      resume: { approved: true },
      interrupt_id: pending.id,
      config: { thread_id: "r1" },
    });
    const replies = ndjson(resumed.text).filter(
      (c) => c.event === "message" && c.message.role === "assistant",
    );
    expect(replies.at(-1).message.content[0].text).toBe('answer: {"approved":true}');
    expect((await ask("GET", "/v1/threads/r1/state")).body.data.state.execution_meta.status).toBe(
      "completed",
    );
  });

  it("lists an in-doubt call and records a human's decision on it: the tool does not run again", async () => {
    const crashed = await decide("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge order 5")],
      config: { thread_id: "d1" },
    });
    expect(crashed.status).toBe(500);
    expect(isErrorEnvelope(crashed.body)).toBe(true);
    const left = (await decide("GET", "/v1/threads/d1/in-doubt")).body.data.calls;
    expect(left).toEqual([
      expect.objectContaining({
        key: "charge_card:order-5-charge",
        tool_name: "charge_card",
        status: "started",
        decidable: false,
      }),
    ]);

    const asked = await decide("POST", "/v1/graph/invoke", {
      continue: true,
      config: { thread_id: "d1" },
    });
    expect(asked.body.data.meta.status).toBe("interrupted");
    const calls = (await decide("GET", "/v1/threads/d1/in-doubt")).body.data.calls;
    expect(calls).toEqual([
      expect.objectContaining({
        key: "charge_card:order-5-charge",
        tool_name: "charge_card",
        arguments: { order_id: "5" },
        decidable: true,
      }),
    ]);
    expect(
      (await decide("POST", "/v1/threads/d1/in-doubt/other-key", { action: "retry" })).status,
    ).toBe(404);
    expect(
      (
        await decide("POST", "/v1/threads/d1/in-doubt/charge_card:order-5-charge", {
          action: "maybe",
        })
      ).status,
    ).toBe(422);

    const decided = await decide("POST", "/v1/threads/d1/in-doubt/charge_card:order-5-charge", {
      action: "complete",
      result: "Charged 42 USD (checked with the provider)",
    });
    expect(decided.status).toBe(200);
    expect(decided.body.data.meta.status).toBe("completed");
    expect(decided.body.data.messages.at(-1).content[0].text).toBe(
      "done: Charged 42 USD (checked with the provider)",
    );
    expect(doubts.count(/charged order 5/)).toBe(1);
    const ledger = (await decide("GET", "/v1/threads/d1/ledger")).body.data.entries;
    expect(ledger).toEqual([
      expect.objectContaining({ key: "charge_card:order-5-charge", status: "completed" }),
    ]);
    expect((await decide("GET", "/v1/threads/d1/in-doubt")).body.data.calls).toEqual([]);
  });
});
