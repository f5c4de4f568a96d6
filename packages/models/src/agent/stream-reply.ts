import type { AssistantMessage, TokenUsage, ToolCall } from "@tenxgraph/core";
import { streamText, type ModelMessage, type ToolSet } from "ai";
import type { LanguageModelObject } from "../providers/resolve-model.js";
import { classifyFailure, type Failure } from "./classify-failure.js";
import { toTokenUsage } from "./message-mapping.js";

/** Everything one model request sends; the same for every attempt of a step. */
export interface ReplyRequest {
  model: LanguageModelObject;
  system: string | undefined;
  messages: ModelMessage[];
  tools: ToolSet | undefined;
  temperature: number | undefined;
  maxTokens: number | undefined;
  providerOptions: ProviderOptions | undefined;
  /** For a structured response: the schema, sent as the provider's JSON response format. */
  output?: ReplyOutput;
}

/** The AI SDK's structured output setting (`Output.object({ schema })`). */
export type ReplyOutput = NonNullable<Parameters<typeof streamText>[0]["output"]>;

/** Provider-specific request options, keyed by provider (`{ openai: { user: "u-1" } }`). */
export type ProviderOptions = NonNullable<Parameters<typeof streamText>[0]["providerOptions"]>;

/** A block of the model's reasoning, with its provider's data (a signature). */
export type ReasoningBlock = NonNullable<AssistantMessage["reasoning"]>[number];

/** What the model said in one request. */
export interface Reply {
  text: string;
  toolCalls: ToolCall[];
  /** The model's reasoning blocks, in order; providers that sign them need them back. */
  reasoning: ReasoningBlock[];
  usage: TokenUsage | undefined;
  /** The provider's own finish reason (`stop`, `tool_calls`, `length`, `end_turn`, ...). */
  finishReason: string | undefined;
}

/** How one request ended: a reply, a failure, or cut off by its signal. */
export type ReplyOutcome =
  { kind: "reply"; reply: Reply } | { kind: "failed"; failure: Failure } | { kind: "aborted" };

/**
 * Makes one streaming request and reads it to the end. Text deltas go to `onTextDelta` as they
 * arrive. A tool call keeps the provider's id and the raw JSON the model produced (gathered
 * from its input deltas, so even JSON that does not parse reaches the `ToolNode`, which tells
 * the model) and what the provider attached to it; reasoning is kept with its provider's data,
 * so both can be sent back. Failures come back as data: the caller decides whether to retry.
 */
export async function streamReply(
  request: ReplyRequest,
  signal: AbortSignal,
  onTextDelta: (delta: string) => void,
): Promise<ReplyOutcome> {
  const result = streamText({
    model: request.model,
    system: request.system,
    messages: request.messages,
    tools: request.tools,
    temperature: request.temperature,
    maxOutputTokens: request.maxTokens,
    providerOptions: request.providerOptions,
    ...(request.output && { output: request.output }),
    // Our retry policy owns retries; the SDK's would retry under it, outside our deadlines.
    maxRetries: 0,
    abortSignal: signal,
    // System messages in the transcript are the app's own (`Message.system`), not user input.
    allowSystemInMessages: true,
    // Errors are read from the stream below; without a handler the SDK prints them.
    onError: () => {},
  });
  const reading = new ReplyReader(onTextDelta);
  try {
    for await (const part of result.fullStream) reading.take(part);
  } catch (error) {
    reading.fail(error);
  }
  return reading.outcome();
}

type StreamPart =
  ReturnType<typeof streamText>["fullStream"] extends AsyncIterable<infer P> ? P : never;

/** Collects the parts of one stream into a reply. */
class ReplyReader {
  readonly #onTextDelta: (delta: string) => void;
  readonly #calls: ToolCall[] = [];
  readonly #rawInputs = new Map<string, string>();
  readonly #reasoning = new Map<string, ReasoningBlock>();
  #text = "";
  #usage: TokenUsage | undefined;
  #finishReason: string | undefined;
  #aborted = false;
  #error: unknown = undefined;

  constructor(onTextDelta: (delta: string) => void) {
    this.#onTextDelta = onTextDelta;
  }

  /** Keeps the first error: later ones are usually its consequences. */
  fail(error: unknown): void {
    this.#error ??= error;
  }

  take(part: StreamPart): void {
    switch (part.type) {
      case "text-delta":
        if (part.text === "") return;
        this.#text += part.text;
        this.#onTextDelta(part.text);
        return;
      case "tool-input-delta":
        this.#rawInputs.set(part.id, (this.#rawInputs.get(part.id) ?? "") + part.delta);
        return;
      case "tool-call":
        // A tool the provider ran itself (web search, ...) is not ours to run.
        if (part.providerExecuted) return;
        this.#calls.push({
          id: part.toolCallId,
          name: part.toolName,
          arguments: this.#rawInputs.get(part.toolCallId) ?? inputText(part.input),
          // Gemini signs its calls (`thoughtSignature`) and refuses a call sent back without it.
          ...(part.providerMetadata && { providerMetadata: part.providerMetadata }),
        });
        return;
      case "reasoning-start":
      case "reasoning-delta":
      case "reasoning-end":
        this.#reason(part.id, part.type === "reasoning-delta" ? part.text : "", part);
        return;
      case "finish":
        this.#usage = toTokenUsage(part.totalUsage);
        this.#finishReason = part.rawFinishReason;
        return;
      case "error":
        this.fail(part.error);
        return;
      case "abort":
        this.#aborted = true;
        return;
    }
  }

  /**
   * Adds to reasoning block `id`. Its provider's data may come on any of its parts (Anthropic
   * sends the signature on a delta of its own), so each part's is merged in.
   */
  #reason(id: string, text: string, { providerMetadata }: { providerMetadata?: Metadata }): void {
    const block = this.#reasoning.get(id) ?? { text: "" };
    block.text += text;
    if (providerMetadata) {
      block.providerMetadata = mergeMetadata(block.providerMetadata, providerMetadata);
    }
    this.#reasoning.set(id, block);
  }

  outcome(): ReplyOutcome {
    if (this.#aborted) return { kind: "aborted" };
    if (this.#error !== undefined) {
      return { kind: "failed", failure: classifyFailure(this.#error) };
    }
    // A provider always ends a real reply with a finish reason. Without one, a body that held
    // nothing was not a reply (an HTML page behind a 200, a wrong base URL); a body that held
    // something was cut off (a proxy closed it cleanly), and keeping the part would persist a
    // truncated answer as if the model had finished it.
    if (this.#finishReason === undefined) {
      const empty =
        this.#text === "" &&
        this.#calls.length === 0 &&
        this.#rawInputs.size === 0 &&
        this.#reasoning.size === 0;
      return { kind: "failed", failure: empty ? emptyResponse() : endedEarly() };
    }
    return {
      kind: "reply",
      reply: {
        text: this.#text,
        toolCalls: this.#calls,
        reasoning: [...this.#reasoning.values()].filter((b) => b.text || b.providerMetadata),
        usage: this.#usage,
        finishReason: this.#finishReason,
      },
    };
  }
}

type Metadata = NonNullable<ReasoningBlock["providerMetadata"]>;

/** Two parts' provider data, the later winning per provider and key. */
function mergeMetadata(earlier: Metadata | undefined, later: Metadata): Metadata {
  const merged: Metadata = { ...earlier };
  for (const [provider, data] of Object.entries(later)) {
    merged[provider] = { ...merged[provider], ...data };
  }
  return merged;
}

/** A call's input when the provider sent no deltas: its raw text, or the parsed value as JSON. */
function inputText(input: unknown): string {
  return typeof input === "string" ? input : JSON.stringify(input ?? {});
}

function emptyResponse(): Failure {
  const message =
    "the response held no message and no finish reason " +
    "(is the base URL an OpenAI-compatible chat completions API?)";
  return { kind: "malformed", message, statusCode: null, retryAfterMs: null, error: undefined };
}

function endedEarly(): Failure {
  const message = "the stream ended before the provider's finish (no finish reason)";
  return { kind: "transient", message, statusCode: null, retryAfterMs: null, error: undefined };
}
