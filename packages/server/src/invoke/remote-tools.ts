import {
  isRemoteToolCall,
  type Interrupt,
  type Message,
  type RemoteToolCall,
  type RemoteToolSpec,
  type ResumeInput,
} from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { z } from "zod";
import { ApiError } from "../http/api-error.js";
import type { WireMessage } from "../wire/wire-message.js";

const parameters = z.record(z.string(), z.unknown());

/**
 * One entry of `config.remote_tools`: OpenAI's `{ type: "function", function: {...} }` or the
 * flat `{ name, description, parameters }`.
 */
export const remoteToolConfigSchema = z.union([
  z.object({
    type: z.literal("function"),
    function: z.object({
      name: z.string().min(1),
      description: z.string().optional(),
      parameters: parameters.optional(),
    }),
  }),
  z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: parameters.optional(),
  }),
]);

/** `config.remote_tools` as core's specs. */
export function remoteToolSpecs(
  entries: z.infer<typeof remoteToolConfigSchema>[],
): RemoteToolSpec[] {
  return entries.map((entry) => ("function" in entry ? entry.function : entry));
}

/** The pending remote tool calls of an interrupted thread, with their interrupt ids. */
export function pendingRemoteCalls(
  checkpoint: ThreadCheckpoint | null,
): { id: string; call: RemoteToolCall }[] {
  if (checkpoint?.status !== "interrupted") return [];
  return checkpoint.interrupts.flatMap((i) =>
    isRemoteToolCall(i.value) ? [{ id: i.id, call: i.value }] : [],
  );
}

/**
 * A request whose messages are all tool results answers the thread's pending remote calls, one
 * resume each (10xGraph's client sends them so, with no other marker). A result for a call that
 * is not waiting (answered already, or never asked) is a 409: recording it would answer the call
 * twice, and appending it would leave a tool message no call asked for.
 */
export function remoteAnswers(
  checkpoint: ThreadCheckpoint | null,
  threadId: string,
  messages: Message[],
): ResumeInput[] | null {
  if (messages.length === 0 || messages.some((m) => m.role !== "tool")) return null;
  const pending = pendingRemoteCalls(checkpoint);
  return messages.map((message) => {
    const callId = message.role === "tool" ? message.toolCallId : "";
    const asked = pending.find((p) => p.call.toolCallId === callId);
    if (!asked) {
      const waiting = pending.map((p) => `'${p.call.toolCallId}'`).join(", ") || "none";
      throw new ApiError(
        409,
        "REMOTE_TOOL_NOT_PENDING",
        `No remote tool call '${callId}' waits for a result on thread '${threadId}' ` +
          `(waiting: ${waiting}); a recorded result is never asked for again`,
        [{ loc: ["body", "messages"], msg: "tool result for no pending call", type: "conflict" }],
      );
    }
    const answer = {
      role: "tool",
      content: message.content,
      ...(message.role === "tool" && message.isError ? { isError: true } : {}),
    };
    return { resume: answer, interruptId: asked.id };
  });
}

/** Remote tool specs for the calls a thread waits on, so their node runs again without the config. */
export function specsForPending(checkpoint: ThreadCheckpoint | null): RemoteToolSpec[] {
  return [...new Set(pendingRemoteCalls(checkpoint).map((p) => p.call.name))].map((name) => ({
    name,
  }));
}

/**
 * 10xGraph's placeholder for a remote call: a tool message with one `remote_tool_call` block,
 * which its client runs and answers with a `tool_result`. Never stored: the pending interrupt is
 * the record.
 */
export function remotePlaceholders(interrupts: readonly Interrupt[]): WireMessage[] {
  return interrupts.flatMap((i) => {
    if (!isRemoteToolCall(i.value)) return [];
    const call = i.value;
    return [
      {
        message_id: `remote:${i.id}`,
        role: "tool",
        content: [
          {
            type: "remote_tool_call",
            id: call.toolCallId,
            name: call.name,
            args: call.args,
            tool_type: "remote",
          },
        ],
        delta: false,
        tools_calls: null,
        reasoning: null,
        timestamp: Date.now() / 1000,
        metadata: { is_remote: true, interrupt_id: i.id },
        usages: null,
        raw: null,
        parsed_content: null,
      },
    ];
  });
}
