import type { Message, StreamEvent } from "@tenxgraph/core";
import { remotePlaceholders } from "./wire-remote-tools.js";
import { toWireMessage } from "./convert-message.js";
import type { Granularity, StreamChunk, WireMessage } from "@tenxgraph/client";

export type { Granularity, StreamChunk } from "@tenxgraph/client";

/** `data.reason` of the `updates` chunk that pauses a run for remote tool calls. */
export const REMOTE_TOOL_PAUSE = "Remote tool call - graph interrupted";

/** Builds the chunks of one run; every chunk carries the run's `metadata` (thread id, is new). */
export class ChunkMaker {
  runId: string | null = null;

  constructor(
    readonly threadId: string,
    readonly metadata: Record<string, unknown>,
    readonly recursionLimit: number,
  ) {}

  chunk(event: StreamChunk["event"], fields: Partial<StreamChunk>): StreamChunk {
    return {
      event,
      message: null,
      state: null,
      data: null,
      thread_id: this.threadId,
      run_id: this.runId,
      timestamp: Date.now() / 1000,
      ...fields,
      metadata: { ...this.metadata, ...fields.metadata },
    };
  }

  /** The echo of an input message, sent first as 10xGraph does. */
  input(message: Message): StreamChunk {
    return this.chunk("message", {
      message: toWireMessage(message),
      metadata: { status: "invoking_graph" },
    });
  }

  /** The chunks for one runtime event, or none. */
  fromEvent(event: StreamEvent): StreamChunk[] {
    switch (event.type) {
      case "run_start":
        this.runId = event.runId;
        return [this.chunk("updates", { data: { status: "run_started", mode: event.mode } })];
      case "node_start":
        return [
          this.updates({
            status: "node_invoked",
            node: event.node,
            step: event.step,
            max_steps: this.recursionLimit,
          }),
        ];
      case "message":
        return [
          this.chunk("message", {
            message: toWireMessage(event.message),
            metadata: { node: event.node },
          }),
        ];
      case "message_delta":
        return [this.delta(event.messageId, event.delta, event.node)];
      case "tool_start":
        return [
          this.updates({
            status: "tool_started",
            node: event.node,
            tool_name: event.toolName,
            tool_call_id: event.toolCallId,
            key: event.key,
          }),
        ];
      case "tool_result":
        return [
          this.updates({
            status: "tool_completed",
            node: event.node,
            tool_name: event.toolName,
            tool_call_id: event.toolCallId,
            key: event.key,
            replayed: event.replayed,
            is_error: event.isError,
          }),
        ];
      case "tool_in_doubt":
        return [
          this.updates({
            status: "tool_in_doubt",
            node: event.node,
            tool_name: event.toolName,
            tool_call_id: event.toolCallId,
            key: event.key,
            attempt: event.attempt,
            policy: event.policy,
          }),
        ];
      case "state":
        return [
          this.chunk("state", {
            data: {
              version: event.version,
              step: event.step,
              current_node: event.currentNode,
              status: event.status,
            },
          }),
        ];
      case "interrupt": {
        // Each remote call's placeholder once, as a final message (kept at every granularity):
        // 10xGraph's client runs every remote_tool_call block it reads.
        const placeholders = remotePlaceholders(event.interrupts);
        return [
          ...placeholders.map((message) => this.chunk("message", { message })),
          this.updates({
            status: "interrupted",
            reason: placeholders.length > 0 ? REMOTE_TOOL_PAUSE : "interrupt",
            interrupts: event.interrupts,
          }),
        ];
      }
      case "run_end":
        return [this.updates(endData(event.status, event.version))];
      case "error":
        return [
          this.chunk("error", {
            data: { status: "invoked_graph", reason: event.message, code: event.code },
          }),
        ];
    }
  }

  updates(data: Record<string, unknown>): StreamChunk {
    return this.chunk("updates", { data });
  }

  delta(messageId: string, text: string, node: string): StreamChunk {
    const message = {
      message_id: messageId,
      role: "assistant",
      content: [{ type: "text", text, annotations: [] }],
      delta: true,
      tools_calls: null,
      reasoning: null,
      timestamp: Date.now() / 1000,
      metadata: {},
      usages: null,
      raw: null,
      parsed_content: null,
    } satisfies WireMessage;
    return this.chunk("message", { message, metadata: { node } });
  }
}

function endData(status: string, version: number): Record<string, unknown> {
  if (status === "completed") return { status: "graph_invoked", run_status: status, version };
  return {
    status,
    run_status: status,
    reason: status === "stopped" ? "Graph stopped" : "Graph interrupted",
    version,
  };
}

/** True when `chunk` passes the granularity filter. */
export function passes(chunk: StreamChunk, granularity: Granularity): boolean {
  if (granularity === "full") return true;
  // The pause for remote tools is how a client knows to run them (10xGraph's WebSocket client
  // reads this reason), so it goes out at every granularity.
  if (chunk.data?.reason === REMOTE_TOOL_PAUSE) return true;
  if (granularity === "partial") return chunk.event !== "updates";
  return chunk.event === "message" || chunk.event === "error";
}
