/** A content block: a `type` and that type's fields (`text` blocks carry `text`). */
export interface ContentBlock {
  type: string;
  [field: string]: unknown;
}

/** A text block. */
export interface TextBlock extends ContentBlock {
  type: "text";
  text: string;
}

/** A tool call in OpenAI's shape, as `tools_calls` carries it (`arguments` is a JSON string). */
export type WireToolCall = {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
};

/** The roles a message may have. */
export type MessageRole = "user" | "assistant" | "system" | "tool";

/**
 * A message as the server sends it (10xGraph's `Message` dump). A tool message has one
 * `tool_result` block (`call_id`, `output`, `is_error`); an assistant message that calls tools
 * has `tools_calls` and a `tool_call` block per call. `timestamp` is in seconds.
 */
export interface WireMessage {
  message_id: string;
  role: MessageRole;
  content: ContentBlock[];
  /** True on a partial assistant message (model tokens) in a stream. */
  delta: boolean;
  tools_calls: WireToolCall[] | null;
  reasoning: string | null;
  timestamp: number;
  metadata: Record<string, unknown>;
  usages: Record<string, number> | null;
  raw: null;
  parsed_content: null;
}

/**
 * A message to send. `content` may be a string; `message_id` may be left out (the server mints
 * one). A tool message names its call with `tool_call_id` or a `tool_result` block's `call_id`.
 * (A type, not an interface: the server's loose request schemas take it, see its wire-contract.ts.)
 */
export type MessageInput = {
  role: MessageRole;
  content: string | ContentBlock[];
  message_id?: string | null;
  tools_calls?: WireToolCall[] | null;
  tool_call_id?: string | null;
  /** Seconds (or milliseconds) since the epoch. */
  timestamp?: number | null;
  metadata?: Record<string, unknown> | null;
};

/** A user message with `text`, as the server expects it. */
export function userMessage(text: string): MessageInput {
  return { role: "user", content: [{ type: "text", text }] };
}

/** The text of a message's text blocks, joined (empty when it has none). */
export function messageText(message: { content: string | ContentBlock[] }): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((b) => (b.type === "text" ? String(b.text ?? "") : "")).join("");
}
