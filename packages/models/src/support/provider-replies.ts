import type { FakeReply } from "./fake-openai-server.js";

/**
 * Streamed replies in the wire shapes of Gemini (`streamGenerateContent?alt=sse`) and of
 * Anthropic's Messages API, for the fake server to answer those providers' clients with.
 */

/** One Gemini stream event holding the candidate's parts (`functionCall`, `text`, ...). */
export function geminiReply(parts: object[]): FakeReply {
  const body = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
  };
  // Gemini's stream has no `[DONE]` line: it ends with the body.
  return { sse: [body], endWithDone: false };
}

/** A content block of an Anthropic reply. */
export type AnthropicBlock =
  | { thinking: string; signature: string }
  | { text: string }
  | { toolUse: { id: string; name: string; json: string } };

/** A whole Anthropic stream: `message_start`, each block's start/deltas/stop, the stop reason. */
export function anthropicReply(blocks: AnthropicBlock[], stopReason: string): FakeReply {
  const start = {
    type: "message_start",
    message: {
      id: "msg_01",
      type: "message",
      role: "assistant",
      content: [],
      model: "claude-sonnet-4-5",
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  };
  const end = [
    {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 20 },
    },
    { type: "message_stop" },
  ];
  const events = blocks.flatMap((block, index) => [
    ...anthropicBlockEvents(block).map((event) => ({ ...event, index })),
    { type: "content_block_stop", index },
  ]);
  return { sse: [start, ...events, ...end], endWithDone: false };
}

function anthropicBlockEvents(block: AnthropicBlock): object[] {
  const delta = (d: object) => ({ type: "content_block_delta", delta: d });
  if ("thinking" in block) {
    return [
      { type: "content_block_start", content_block: { type: "thinking", thinking: "" } },
      delta({ type: "thinking_delta", thinking: block.thinking }),
      // The signature arrives on a delta of its own, after the thinking text.
      delta({ type: "signature_delta", signature: block.signature }),
    ];
  }
  if ("text" in block) {
    return [
      { type: "content_block_start", content_block: { type: "text", text: "" } },
      delta({ type: "text_delta", text: block.text }),
    ];
  }
  const { id, name, json } = block.toolUse;
  return [
    { type: "content_block_start", content_block: { type: "tool_use", id, name, input: {} } },
    delta({ type: "input_json_delta", partial_json: json }),
  ];
}
