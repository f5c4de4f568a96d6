import type { Message, RemoteToolSpec, ResumeInput } from "@tenxgraph/core";
import { isRemoteToolCall, type RemoteToolCall } from "@tenxgraph/core/host";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import type { z } from "zod";
import { ApiError } from "../http/api-error.js";
import type { remoteToolConfigSchema } from "../wire/wire-remote-tools.js";

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
