import type { FakeReply } from "./fake-openai-server.js";

/**
 * Replies in the exact shapes of OpenAI's chat completions API, as recorded from it: SSE chunks
 * (`chat.completion.chunk`, `usage: null` on every chunk but the last when usage is asked for,
 * a final chunk with `choices: []` and the usage) and its JSON error bodies.
 */

const MODEL = "gpt-4o-mini-2024-07-18";
const FINGERPRINT = "fp_0ba0d124f1";

/** A tool call as the model streams it: the arguments arrive in `argumentChunks` pieces. */
export interface StreamedToolCall {
  id: string;
  name: string;
  /** The arguments' JSON text, split the way the model streamed it. */
  argumentChunks: string[];
}

/** What a streamed reply says. */
export interface StreamedReplySpec {
  /** Text deltas, in order. */
  text?: string[];
  toolCalls?: StreamedToolCall[];
  usage?: { prompt: number; completion: number };
  /** Defaults to `tool_calls` when there are calls, else `stop`. */
  finishReason?: string;
}

let sequence = 0;

/** A whole streamed completion: role chunk, text deltas, tool call deltas, finish, usage. */
export function streamedReply(spec: StreamedReplySpec, delayMs?: number): FakeReply {
  const id = `chatcmpl-B${(sequence += 1).toString().padStart(4, "0")}xQfRkL0tVw9n`;
  const chunk = (delta: object | null, finishReason: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created: 1733400000 + sequence,
    model: MODEL,
    service_tier: "default",
    system_fingerprint: FINGERPRINT,
    choices:
      delta === null ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null as object | null,
  });
  const hasCalls = (spec.toolCalls?.length ?? 0) > 0;
  const chunks: object[] = [
    chunk({ role: "assistant", content: hasCalls && !spec.text ? null : "", refusal: null }),
  ];
  for (const text of spec.text ?? []) chunks.push(chunk({ content: text }));
  spec.toolCalls?.forEach((call, index) => chunks.push(...toolCallChunks(call, index, chunk)));
  chunks.push(chunk({}, spec.finishReason ?? (hasCalls ? "tool_calls" : "stop")));
  if (spec.usage) {
    const last = chunk(null);
    last.usage = usageOf(spec.usage);
    chunks.push(last);
  }
  return delayMs === undefined ? { sse: chunks } : { sse: chunks, delayMs };
}

function toolCallChunks(
  call: StreamedToolCall,
  index: number,
  chunk: (delta: object) => object,
): object[] {
  const [first = "", ...rest] = call.argumentChunks;
  return [
    chunk({
      tool_calls: [
        { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
      ],
    }),
    ...[first, ...rest]
      .filter((piece) => piece !== "")
      .map((piece) => chunk({ tool_calls: [{ index, function: { arguments: piece } }] })),
  ];
}

function usageOf(usage: { prompt: number; completion: number }) {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** Splits `text` into pieces of at most `size` characters, as a model streams arguments. */
export function pieces(text: string, size = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** HTTP 429 with OpenAI's rate-limit body and a `retry-after` header (seconds, or a date). */
export function rateLimited(retryAfter: string): FakeReply {
  return {
    status: 429,
    headers: { "retry-after": retryAfter, "x-ratelimit-remaining-requests": "0" },
    json: {
      error: {
        message:
          "Rate limit reached for gpt-4o-mini in organization org-test on requests per min (RPM): " +
          "Limit 3, Used 3, Requested 1. Please try again in 20s.",
        type: "requests",
        param: null,
        code: "rate_limit_exceeded",
      },
    },
  };
}

/** HTTP 500 with OpenAI's server error body. */
export function serverError(): FakeReply {
  return {
    status: 500,
    json: {
      error: {
        message: "The server had an error while processing your request. Sorry about that!",
        type: "server_error",
        param: null,
        code: null,
      },
    },
  };
}

/** HTTP 400 with OpenAI's invalid request body naming the bad parameter. */
export function badRequest(message: string, param: string): FakeReply {
  return {
    status: 400,
    json: { error: { message, type: "invalid_request_error", param, code: null } },
  };
}

/** HTTP 429 with OpenAI's out-of-credits body: a 429, but not a rate limit. */
export function insufficientQuota(): FakeReply {
  return {
    status: 429,
    json: {
      error: {
        message: "You exceeded your current quota, please check your plan and billing details.",
        type: "insufficient_quota",
        param: null,
        code: "insufficient_quota",
      },
    },
  };
}
