import { IN_DOUBT_INTERRUPT_KIND, Message, type StreamEvent } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { UiChunkMaker } from "./chat-chunks.js";

const runStart: StreamEvent = { type: "run_start", threadId: "t", runId: "r1", mode: "new" };

function chunksOf(maker: UiChunkMaker, events: StreamEvent[]) {
  return events.flatMap((event) => maker.fromEvent(event));
}

describe("UiChunkMaker", () => {
  it("opens a step with the first delta and closes the streamed text with the message, once", () => {
    const reply = Message.assistant("Hello there");
    const chunks = chunksOf(new UiChunkMaker(), [
      runStart,
      { type: "message_delta", node: "MAIN", messageId: reply.id, delta: "Hello " },
      { type: "message_delta", node: "MAIN", messageId: reply.id, delta: "there" },
      { type: "message", node: "MAIN", message: reply },
      { type: "run_end", status: "completed", version: 3 },
    ]);
    expect(chunks.map((c) => c.type)).toEqual([
      "data-run-status",
      "start-step",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "finish-step",
      "data-run-status",
      "finish",
    ]);
    expect(chunks.at(-2)).toMatchObject({
      id: "run-status",
      data: { run_id: "r1", status: "completed" },
    });
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
  });

  it("sends a reply that was not streamed whole: reasoning, text, then its calls (bad JSON as an input error)", () => {
    const reply = Message.assistant("Checking", [
      { id: "c1", name: "lookup_order", arguments: '{"order_id":"7"}' },
      { id: "c2", name: "charge_card", arguments: "{not json" },
    ]);
    reply.reasoning = [{ text: "think" }];
    const chunks = chunksOf(new UiChunkMaker(), [
      { type: "message", node: "MAIN", message: reply },
    ]);
    expect(chunks.map((c) => c.type)).toEqual([
      "start-step",
      "reasoning-start",
      "reasoning-delta",
      "reasoning-end",
      "text-start",
      "text-delta",
      "text-end",
      "tool-input-available",
      "tool-input-error",
    ]);
    expect(chunks[7]).toEqual({
      type: "tool-input-available",
      toolCallId: "c1",
      toolName: "lookup_order",
      input: { order_id: "7" },
    });
  });

  it("marks replayed and failed results, and shows again a call an earlier stream announced", () => {
    const maker = new UiChunkMaker([
      { id: "c9", name: "charge_card", arguments: '{"order_id":"9"}' },
    ]);
    const result = (isError: boolean, replayed: boolean): StreamEvent => ({
      type: "tool_result",
      node: "TOOL",
      key: "k",
      toolCallId: "c9",
      toolName: "charge_card",
      replayed,
      isError,
      message: Message.tool("c9", isError ? "declined" : "Charged"),
    });
    expect(maker.fromEvent(result(false, true)).map((c) => c.type)).toEqual([
      "tool-input-available",
      "data-replayed-call",
      "tool-output-available",
    ]);
    expect(maker.fromEvent(result(true, false))).toEqual([
      { type: "tool-output-error", toolCallId: "c9", errorText: "declined" },
    ]);
  });

  it("turns a tool's interrupt into a tool approval request, and an in-doubt one names its decisions", () => {
    const maker = new UiChunkMaker([{ id: "c1", name: "wire_money", arguments: "{}" }]);
    const chunks = maker.fromEvent({
      type: "interrupt",
      interrupts: [
        {
          id: "i1",
          node: "TOOL",
          toolCallId: "c1",
          value: { kind: IN_DOUBT_INTERRUPT_KIND, tool: "wire_money" },
          message: "?",
        },
        { id: "i2", node: "MAIN", value: { ask: "name" } },
      ],
    });
    expect(chunks.map((c) => c.type)).toEqual([
      "tool-input-available",
      "data-interrupt",
      "tool-approval-request",
      "data-interrupt",
    ]);
    expect(chunks[1]).toMatchObject({
      data: { interrupt_id: "i1", kind: "in-doubt", decisions: ["retry", "complete", "fail"] },
    });
    expect(chunks[2]).toEqual({
      type: "tool-approval-request",
      approvalId: "i1",
      toolCallId: "c1",
    });
    expect(chunks[3]).toMatchObject({
      data: { interrupt_id: "i2", kind: "interrupt", tool_call_id: null },
    });
  });

  it("leaves out a subgraph's events and ends a failed run with an error", () => {
    const maker = new UiChunkMaker();
    const child = Message.assistant("inside");
    expect(
      maker.fromEvent({ type: "message", node: "SUB", message: child, namespace: "SUB" }),
    ).toEqual([]);
    expect(maker.fromEvent({ type: "error", code: "MODEL_001", message: "refused" })).toEqual([
      { type: "error", errorText: "MODEL_001: refused" },
      {
        type: "data-run-status",
        id: "run-status",
        data: { run_id: null, status: "failed", code: "MODEL_001", reason: "refused" },
      },
      { type: "finish", finishReason: "error" },
    ]);
  });
});
