import {
  IN_DOUBT_INTERRUPT_KIND,
  Message,
  type AssistantMessage,
  type Interrupt,
  type RunStatus,
  type StreamEvent,
  type ToolCall,
} from "@tenxgraph/core";
import type { UiFinishReason, UiMessageChunk } from "./ui-message-chunk.js";

/** A tool call the UI message may not hold yet: its name and input. */
export type KnownCall = Pick<ToolCall, "id" | "name" | "arguments">;

/**
 * Turns one run's events into UI message stream chunks, for one assistant UI message. A step
 * (`start-step`) opens with each model reply; the tool results of its calls join that step, as
 * the AI SDK shows a model call with its tools. Stateful: it remembers which text parts are
 * open and which tool calls the message already announced.
 */
export class UiChunkMaker {
  readonly #openTexts = new Set<string>();
  readonly #announced = new Set<string>();
  readonly #earlier = new Map<string, KnownCall>();
  #stepOpen = false;
  #runId: string | null = null;

  /** `earlierCalls`: the calls a resumed run's tools answer, announced by an earlier run. */
  constructor(earlierCalls: readonly KnownCall[] = []) {
    for (const call of earlierCalls) this.#earlier.set(call.id, call);
  }

  /** The chunks that open the stream: the message id the client shows them under. */
  start(messageId: string | undefined): UiMessageChunk[] {
    return [messageId === undefined ? { type: "start" } : { type: "start", messageId }];
  }

  fromEvent(event: StreamEvent): UiMessageChunk[] {
    if ("namespace" in event && event.namespace !== undefined) return []; // a subgraph's own
    switch (event.type) {
      case "run_start":
        this.#runId = event.runId;
        return [this.#status({ status: "running", mode: event.mode })];
      case "message_delta":
        return [...this.#openText(event.messageId), textDelta(event.messageId, event.delta)];
      case "message":
        return event.message.role === "assistant" ? this.#reply(event.message) : [];
      case "tool_result":
        return [
          ...this.#announce(event.toolCallId, event.toolName),
          ...(event.replayed ? [replayed(event)] : []),
          event.isError
            ? {
                type: "tool-output-error",
                toolCallId: event.toolCallId,
                errorText: Message.text(event.message),
              }
            : {
                type: "tool-output-available",
                toolCallId: event.toolCallId,
                output: Message.text(event.message),
              },
        ];
      case "tool_in_doubt":
        return [
          ...this.#announce(event.toolCallId, event.toolName),
          {
            type: "data-in-doubt-call",
            id: `in-doubt-${event.key}-${event.attempt}`,
            data: {
              tool_call_id: event.toolCallId,
              tool_name: event.toolName,
              key: event.key,
              attempt: event.attempt,
              policy: event.policy,
            },
          },
        ];
      case "interrupt":
        return event.interrupts.flatMap((interrupt) => this.#interrupt(interrupt));
      case "run_end":
        return [
          ...this.#closeStep(),
          this.#status({ status: event.status, version: event.version }),
          { type: "finish", finishReason: FINISH_REASONS[event.status] },
        ];
      case "error":
        return [
          ...this.#closeStep(),
          {
            type: "error",
            errorText: event.code ? `${event.code}: ${event.message}` : event.message,
          },
          this.#status({ status: "failed", code: event.code, reason: event.message }),
          { type: "finish", finishReason: "error" },
        ];
      default:
        return [];
    }
  }

  /** A model reply: its reasoning, the rest of its text, its tool calls, in one new step. */
  #reply(message: AssistantMessage): UiMessageChunk[] {
    const chunks: UiMessageChunk[] = [];
    const streamed = this.#openTexts.has(message.id);
    if (!streamed) chunks.push(...this.#openStep());
    message.reasoning?.forEach((block, i) => {
      const id = `${message.id}-reasoning-${i}`;
      chunks.push({ type: "reasoning-start", id });
      chunks.push({ type: "reasoning-delta", id, delta: block.text });
      chunks.push({ type: "reasoning-end", id });
    });
    const text = Message.text(message);
    if (!streamed && text !== "") {
      chunks.push({ type: "text-start", id: message.id }, textDelta(message.id, text));
    }
    if (text !== "" || streamed) chunks.push({ type: "text-end", id: message.id });
    this.#openTexts.delete(message.id);
    for (const call of message.toolCalls ?? []) chunks.push(...this.#callChunks(call));
    return chunks;
  }

  /** The run's status: one part, replaced as the run goes on. */
  #status(data: Record<string, unknown>): UiMessageChunk {
    return { type: "data-run-status", id: "run-status", data: { run_id: this.#runId, ...data } };
  }

  #openText(messageId: string): UiMessageChunk[] {
    if (this.#openTexts.has(messageId)) return [];
    this.#openTexts.add(messageId);
    return [...this.#openStep(), { type: "text-start", id: messageId }];
  }

  /** A new step for a new model reply (closing the one before). */
  #openStep(): UiMessageChunk[] {
    const chunks = this.#closeStep();
    this.#stepOpen = true;
    return [...chunks, { type: "start-step" }];
  }

  #closeStep(): UiMessageChunk[] {
    if (!this.#stepOpen) return [];
    this.#stepOpen = false;
    return [{ type: "finish-step" }];
  }

  #callChunks(call: KnownCall): UiMessageChunk[] {
    this.#announced.add(call.id);
    const parsed = parseArguments(call.arguments);
    if (parsed.ok)
      return [
        {
          type: "tool-input-available",
          toolCallId: call.id,
          toolName: call.name,
          input: parsed.value,
        },
      ];
    return [
      {
        type: "tool-input-error",
        toolCallId: call.id,
        toolName: call.name,
        input: call.arguments,
        errorText: "The model's arguments are not JSON",
      },
    ];
  }

  /**
   * A call this stream has not shown (a resumed run's tools answer the calls of a reply an
   * earlier run streamed): shown again first, so every stream stands on its own (a resumed
   * stream is read from its start by a client that kept nothing).
   */
  #announce(toolCallId: string, toolName: string): UiMessageChunk[] {
    if (this.#announced.has(toolCallId)) return [];
    const call = this.#earlier.get(toolCallId) ?? {
      id: toolCallId,
      name: toolName,
      arguments: "{}",
    };
    return this.#callChunks(call);
  }

  #interrupt(interrupt: Interrupt): UiMessageChunk[] {
    const inDoubt =
      (interrupt.value as { kind?: unknown } | null)?.kind === IN_DOUBT_INTERRUPT_KIND;
    const data = {
      interrupt_id: interrupt.id,
      tool_call_id: interrupt.toolCallId ?? null,
      node: interrupt.node,
      value: interrupt.value,
      message: interrupt.message ?? null,
      kind: inDoubt ? "in-doubt" : "interrupt",
      ...(inDoubt ? { decisions: ["retry", "complete", "fail"] } : {}),
    };
    const part: UiMessageChunk = { type: "data-interrupt", id: `interrupt-${interrupt.id}`, data };
    if (interrupt.toolCallId === undefined) return [part];
    const tool = (interrupt.value as { tool?: unknown } | null)?.tool;
    return [
      ...this.#announce(interrupt.toolCallId, typeof tool === "string" ? tool : "unknown"),
      part,
      { type: "tool-approval-request", approvalId: interrupt.id, toolCallId: interrupt.toolCallId },
    ];
  }
}

const FINISH_REASONS: Record<RunStatus, UiFinishReason> = {
  completed: "stop",
  interrupted: "tool-calls",
  stopped: "other",
};

function textDelta(id: string, delta: string): UiMessageChunk {
  return { type: "text-delta", id, delta };
}

function replayed(event: {
  toolCallId: string;
  toolName: string;
  key: string | null;
}): UiMessageChunk {
  return {
    type: "data-replayed-call",
    id: `replayed-${event.toolCallId}`,
    data: { tool_call_id: event.toolCallId, tool_name: event.toolName, key: event.key },
  };
}

function parseArguments(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text === "" ? "{}" : text) as unknown };
  } catch {
    return { ok: false };
  }
}
