import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3Content,
  type LanguageModelV3StreamPart,
  type LanguageModelV3Usage,
} from "@ai-sdk/provider";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import type { ToolDefinition } from "@langchain/core/language_models/base";
import { randomUUID } from "node:crypto";
import { promptToLangChain } from "./prompt-messages.js";

/** The chat model a {@link langchainModel} wraps: any LangChain chat model. */
export type LangChainChatModel = Pick<BaseChatModel, "stream" | "bindTools" | "_llmType">;

/** Names for the wrapped model in errors, logs and traces. */
export interface LangChainModelOptions {
  /** Default `langchain`. */
  provider?: string;
  /** Default the model's `_llmType()` (`openai`, `anthropic`, ...). */
  modelId?: string;
}

/**
 * A LangChain chat model as a Vercel AI SDK model, so it goes wherever `@tenxgraph/models`
 * takes one: `new Agent({ model: langchainModel(chat) })`, `createReactAgent`, the supervisor.
 * The Agent then streams its tokens (`message_delta`, the `messages` stream mode), retries what
 * is transient by its own policy (a LangChain error with an HTTP status 408, 409, 429 or 5xx,
 * or a dropped connection), enforces its timeouts and ids, and its tools are bound with
 * `bindTools`. Give the LangChain model `maxRetries: 0`: its own retries would run inside the
 * Agent's, outside its deadlines. Sampling settings (temperature, max tokens) are the LangChain
 * model's own: set them on it.
 *
 * @example
 * const agent = createReactAgent({ model: langchainModel(new ChatOpenAI({ maxRetries: 0 })), tools });
 */
export function langchainModel(
  chatModel: LangChainChatModel,
  options: LangChainModelOptions = {},
): LanguageModelV3 {
  const model: LanguageModelV3 = {
    specificationVersion: "v3",
    provider: options.provider ?? "langchain",
    modelId: options.modelId ?? chatModel._llmType(),
    supportedUrls: {},
    doStream: async (call) => ({ stream: replyStream(chatModel, call) }),
    doGenerate: async (call) => {
      const content: LanguageModelV3Content[] = [];
      let finish: Extract<LanguageModelV3StreamPart, { type: "finish" }> | undefined;
      const reader = replyStream(chatModel, call).getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        const part = read.value;
        if (part.type === "error") throw part.error;
        if (part.type === "text-delta") content.push({ type: "text", text: part.delta });
        if (part.type === "tool-call") content.push(part);
        if (part.type === "finish") finish = part;
      }
      return {
        content,
        finishReason: finish!.finishReason,
        usage: finish!.usage,
        warnings: [],
      };
    },
  };
  return model;
}

/** The id of the reply's one text part. */
const TEXT_ID = "text";

/** One request to the LangChain model as the AI SDK's stream parts. */
function replyStream(
  chatModel: LangChainChatModel,
  call: LanguageModelV3CallOptions,
): ReadableStream<LanguageModelV3StreamPart> {
  return new ReadableStream<LanguageModelV3StreamPart>({
    start: async (controller) => {
      controller.enqueue({ type: "stream-start", warnings: [] });
      try {
        const messages = promptToLangChain(call.prompt);
        const runnable = bound(chatModel, call);
        let reply: AIMessageChunk | undefined;
        let textStarted = false;
        const stream = await runnable.stream(messages, { signal: call.abortSignal });
        for await (const chunk of stream as AsyncIterable<BaseMessage>) {
          const piece = AIMessageChunk.isInstance(chunk) ? chunk : new AIMessageChunk(chunk);
          reply = reply ? reply.concat(piece) : piece;
          const text = textOf(piece);
          if (text === "") continue;
          if (!textStarted) controller.enqueue({ type: "text-start", id: TEXT_ID });
          textStarted = true;
          controller.enqueue({ type: "text-delta", id: TEXT_ID, delta: text });
        }
        if (textStarted) controller.enqueue({ type: "text-end", id: TEXT_ID });
        for (const part of endParts(reply)) controller.enqueue(part);
      } catch (error) {
        controller.enqueue({ type: "error", error: asSdkError(error) });
      }
      controller.close();
    },
  });
}

/** The model with the request's tools bound; a request with tools needs `bindTools`. */
function bound(chatModel: LangChainChatModel, call: LanguageModelV3CallOptions) {
  const tools: ToolDefinition[] = (call.tools ?? []).flatMap((tool) =>
    tool.type === "function"
      ? [
          {
            type: "function",
            function: {
              name: tool.name,
              description: tool.description ?? "",
              parameters: tool.inputSchema as Record<string, unknown>,
            },
          },
        ]
      : [],
  );
  if (tools.length === 0) return chatModel;
  if (typeof chatModel.bindTools !== "function") {
    throw new TypeError(
      `langchainModel: the ${chatModel._llmType()} chat model has no bindTools, so it cannot be given tools`,
    );
  }
  return chatModel.bindTools(tools);
}

/** The text of a chunk: its string content, or its text blocks. */
function textOf(chunk: AIMessageChunk): string {
  if (typeof chunk.content === "string") return chunk.content;
  return chunk.content
    .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
    .join("");
}

/** The tool calls (raw argument text kept when the model streamed it), usage and finish. */
function endParts(reply: AIMessageChunk | undefined): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [];
  const chunks = reply?.tool_call_chunks ?? [];
  const calls = reply?.tool_calls ?? [];
  for (const toolCall of calls) {
    const raw = chunks.find((c) => c.id !== undefined && c.id === toolCall.id)?.args;
    parts.push({
      type: "tool-call",
      toolCallId: toolCall.id ?? `call_${randomUUID()}`,
      toolName: toolCall.name,
      input: typeof raw === "string" && raw !== "" ? raw : JSON.stringify(toolCall.args ?? {}),
    });
  }
  const metadata = reply?.response_metadata ?? {};
  const raw = metadata.finish_reason ?? metadata.stop_reason;
  parts.push({
    type: "finish",
    usage: usageOf(reply),
    finishReason: {
      unified: calls.length > 0 ? "tool-calls" : raw === "length" ? "length" : "stop",
      raw: typeof raw === "string" ? raw : calls.length > 0 ? "tool_calls" : "stop",
    },
  });
  return parts;
}

function usageOf(reply: AIMessageChunk | undefined): LanguageModelV3Usage {
  const usage = reply?.usage_metadata;
  return {
    inputTokens: {
      total: usage?.input_tokens,
      noCache: undefined,
      cacheRead: usage?.input_token_details?.cache_read,
      cacheWrite: usage?.input_token_details?.cache_creation,
    },
    outputTokens: {
      total: usage?.output_tokens,
      text: undefined,
      reasoning: usage?.output_token_details?.reasoning,
    },
  };
}

/**
 * A LangChain error with an HTTP status (its providers' SDK errors carry `status`) as the AI
 * SDK's `APICallError`, which the Agent sorts into retry or fail; other errors (a dropped
 * connection, a bug) go as they are.
 */
function asSdkError(error: unknown): unknown {
  const e = error as { status?: unknown; statusCode?: unknown; headers?: unknown } | null;
  const status = typeof e?.status === "number" ? e.status : e?.statusCode;
  if (typeof status !== "number" || !(error instanceof Error)) return error;
  return new APICallError({
    message: error.message,
    url: "",
    requestBodyValues: {},
    statusCode: status,
    responseHeaders: headersOf(e?.headers),
    isRetryable: status === 408 || status === 409 || status === 429 || status >= 500,
    cause: error,
  });
}

function headersOf(headers: unknown): Record<string, string> | undefined {
  if (headers instanceof Headers) return Object.fromEntries(headers.entries());
  if (typeof headers !== "object" || headers === null) return undefined;
  return Object.fromEntries(
    Object.entries(headers).filter(
      (entry): entry is [string, string] => typeof entry[1] === "string",
    ),
  );
}
