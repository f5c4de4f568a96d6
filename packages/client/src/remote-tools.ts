import type { MessageInput, WireMessage } from "./wire-message.js";

/** A tool this client runs for the graph (contract §6): attached with `setupRemoteTools`. */
export interface RemoteToolDefinition {
  /** The ToolNode that may call it. */
  nodeName: string;
  name: string;
  description?: string;
  /** The arguments' JSON Schema, sent to the model. */
  parameters?: Record<string, unknown>;
}

/** The answer to `setupRemoteTools`. */
export interface SetupResult {
  status: "success";
  success: true;
  message: string;
  details: string;
  registered_tools: { node_name: string; name: string }[];
}

/** A call the graph paused for: run it, then send {@link toolResult} with the same `id`. */
export interface RemoteToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * The remote tool calls among a run's messages (invoke's `messages`, or a stream's message
 * chunks): each placeholder is a tool message with one `remote_tool_call` block.
 */
export function remoteToolCalls(messages: readonly (WireMessage | null)[]): RemoteToolCall[] {
  return messages.flatMap((message) =>
    (message?.content ?? []).flatMap((block) =>
      block.type === "remote_tool_call"
        ? [
            {
              id: String(block.id),
              name: String(block.name),
              args: (block.args ?? {}) as Record<string, unknown>,
            },
          ]
        : [],
    ),
  );
}

/**
 * The message that answers remote call `callId`: send it (one per call) as the next run's input
 * on the same thread. `output` may be any JSON value; `isError` tells the model the call failed.
 */
export function toolResult(
  callId: string,
  output: unknown,
  options: { isError?: boolean } = {},
): MessageInput {
  const isError = options.isError === true;
  return {
    role: "tool",
    content: [
      {
        type: "tool_result",
        call_id: callId,
        output,
        is_error: isError,
        status: isError ? "failed" : "completed",
      },
    ],
  };
}
