/**
 * The chunks of the AI SDK's UI message stream (protocol `v1`, the one `ai` 6 reads: the
 * `x-vercel-ai-ui-message-stream: v1` header), the part of it this server sends. Written out here
 * rather than imported so the server does not depend on the `ai` package; the int tests read our
 * streams with `ai`'s own parser, which validates every chunk against its schema.
 */
export type UiMessageChunk =
  | { type: "start"; messageId?: string }
  | { type: "finish"; finishReason: UiFinishReason }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start" | "text-end"; id: string }
  | { type: "text-delta"; id: string; delta: string }
  | { type: "reasoning-start" | "reasoning-end"; id: string }
  | { type: "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown }
  | {
      type: "tool-input-error";
      toolCallId: string;
      toolName: string;
      input: unknown;
      errorText: string;
    }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | { type: "tool-output-available"; toolCallId: string; output: unknown }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
  | { type: "error"; errorText: string }
  | UiDataChunk;

/** Why a UI message ended, in the AI SDK's words. */
export type UiFinishReason = "stop" | "tool-calls" | "error" | "other";

/**
 * A `data-*` part: what the AI SDK has no part for. With an `id`, a later chunk of the same type
 * and id replaces the part's data in the message instead of adding a part.
 */
export interface UiDataChunk {
  type: `data-${ChatDataName}`;
  id: string;
  data: Record<string, unknown>;
}

/** The `data-*` parts this server sends (see docs/ai-sdk-ui.md). */
export type ChatDataName = "run-status" | "replayed-call" | "in-doubt-call" | "interrupt";

/** The protocol's response header and its value. */
export const UI_STREAM_HEADER = "x-vercel-ai-ui-message-stream";
export const UI_STREAM_VERSION = "v1";

/** One chunk as an SSE event, as the AI SDK frames them (`data: <json>` and a blank line). */
export function sseFrame(chunk: UiMessageChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The frame that ends a UI message stream. */
export const SSE_DONE = "data: [DONE]\n\n";
