import {
  Message,
  type AssistantMessage,
  type BaseState,
  type GraphNode,
  type NodeContext,
  type NodeOutput,
} from "@tenxgraph/core";
import { resolveModel, type LanguageModelObject } from "../providers/resolve-model.js";
import {
  resolveAgentOptions,
  type AgentOptions,
  type ResolvedAgentOptions,
} from "./agent-options.js";
import { acceptsMediaInToolResults, toModelMessages, toToolSet } from "./message-mapping.js";
import { exhaustedError, hardError, timeoutError } from "./model-errors.js";
import { decideRetry, sleep } from "./retry.js";
import { ChatSpan } from "./chat-span.js";
import { streamReply, type Reply, type ReplyOutcome, type ReplyRequest } from "./stream-reply.js";
import { outputOf, parseStructuredResponse } from "./response-format.js";

/**
 * A model node: sends the thread's transcript (and the tools' schemas) to a model through the
 * Vercel AI SDK and returns its reply as an assistant message. Tool calls keep the provider's
 * ids, raw arguments and signatures, reasoning is kept with its signatures, and both go back
 * to the provider with the transcript; the message gets its id from the runtime
 * (`ctx.newId()`), text is streamed as `message_delta` events carrying that id, and token
 * usage is recorded on it.
 *
 * With `responseFormat`, a reply without tool calls is followed by one more request for the
 * structured response (the AI SDK's `Output.object`), returned with the reply as the update
 * `{ messages, structuredResponse }`; a response the schema refuses is `MODEL_006`.
 *
 * The run loop persists the reply before the next node runs, so a crash in the tool node
 * resumes there and the model is not asked again for a step it already answered.
 *
 * Transient failures (429, 5xx, a dropped connection, a stream cut before its finish) are
 * retried with backoff that honours `retry-after`; every wait ends when the node's signal
 * aborts (deadline, stop). Other failures fail the node with a `ModelError`: `MODEL_001`
 * refused (out of credits included) or failed, `MODEL_002` request timeout,
 * `MODEL_003` unusable model, `MODEL_004` malformed response, `MODEL_005` retries exhausted.
 *
 * @example
 * const agent = new Agent({ model: "openai/gpt-4o-mini", tools: [lookupOrder, chargeCard] });
 * graph.addNode("MAIN", agent).addNode("TOOL", new ToolNode([lookupOrder, chargeCard]));
 */
export class Agent<S extends BaseState = BaseState> implements GraphNode<S> {
  readonly #options: ResolvedAgentOptions<S>;
  #model: Promise<LanguageModelObject> | undefined;

  constructor(options: AgentOptions<S>) {
    this.#options = resolveAgentOptions(options);
  }

  /** The model's name: the string given, or `provider/modelId` of a model object. */
  get model(): string {
    return this.#options.label;
  }

  async run(state: S, ctx: NodeContext): Promise<NodeOutput<S>> {
    const request = await this.#request(state, ctx);
    const answer = await this.#ask(request, ctx);
    const format = this.#options.responseFormat;
    if (!format || answer.message.toolCalls?.length) return answer.message;
    // As LangGraph.js does: one more request once the model stopped calling tools, with what
    // it was sent, its answer and the schema, and neither tools nor the agent's prompt.
    const structured = await this.#ask(
      {
        ...request,
        system: format.prompt,
        messages: [...request.messages, ...toModelMessages([answer.message])],
        tools: undefined,
        output: outputOf(format),
      },
      ctx,
    );
    const text = Message.text(structured.message);
    const structuredResponse = parseStructuredResponse(
      this.model,
      text,
      format,
      structured.attempts,
    );
    // `structuredResponse` is a field of the state the Agent runs in (ReactAgentState's).
    return { messages: [answer.message], structuredResponse } as unknown as NodeOutput<S>;
  }

  /** One traced request, retried: the reply and the attempts it took. */
  async #ask(
    request: ReplyRequest,
    ctx: NodeContext,
  ): Promise<{ message: AssistantMessage; attempts: number }> {
    const span = ChatSpan.start(this.#options.tracing, request);
    try {
      return await this.#reply(request, ctx, span);
    } catch (error) {
      span.failed(error);
      throw error;
    }
  }

  /** Asks the model, retrying transient failures, until it replies. */
  async #reply(
    request: ReplyRequest,
    ctx: NodeContext,
    span: ChatSpan,
  ): Promise<{ message: AssistantMessage; attempts: number }> {
    for (let attempt = 1; ; attempt += 1) {
      // Each attempt gets a fresh id: deltas of an attempt that failed midway belong to a
      // message that never completes, so a client never appends a retry's text to them.
      const messageId = ctx.newId();
      const outcome = await this.#attempt(request, messageId, attempt, ctx);
      if (outcome.kind === "reply") {
        const message = this.#message(messageId, outcome.reply, ctx);
        span.replied(message, outcome.reply.finishReason, attempt);
        return { message, attempts: attempt };
      }
      const failure = outcome.failure;
      if (failure.kind !== "transient") throw hardError(this.model, failure, attempt);
      const { retry } = this.#options;
      const remainingMs = ctx.deadlineAt === null ? null : ctx.deadlineAt - Date.now();
      const decision = decideRetry(attempt, retry, failure.retryAfterMs, remainingMs);
      if (!decision.retry) {
        throw exhaustedError(this.model, failure, attempt, decision.reason, retry.maxDelayMs);
      }
      ctx.logger.warn(
        {
          model: this.model,
          attempt,
          statusCode: failure.statusCode,
          delayMs: Math.round(decision.delayMs),
          error: failure.message,
        },
        "Model request failed with a transient error; retrying",
      );
      span.retry(attempt, failure, decision.delayMs);
      await sleep(decision.delayMs, ctx.signal);
    }
  }

  async #request(state: S, ctx: NodeContext): Promise<ReplyRequest> {
    const options = this.#options;
    const model = await this.#resolveModel();
    // With a ToolNode, its tools as of this run: remote tools attached since, and the run's own.
    const tools = options.toolNode ? options.toolNode.toolsFor(ctx) : options.tools;
    const messages = await this.#messagesFor(state);
    return {
      model,
      system: options.systemPrompt,
      messages: toModelMessages(messages, {
        mediaInToolResults: acceptsMediaInToolResults(model.provider),
      }),
      tools: tools.length > 0 ? toToolSet(tools) : undefined,
      temperature: options.temperature,
      maxTokens: options.maxTokens,
      providerOptions: options.providerOptions,
    };
  }

  /**
   * The messages the model is sent: the transcript, or what `prepareMessages` makes of it. The
   * hook gets a deep copy of the transcript (the node's copy of the state shares the message
   * objects with the thread), so whatever it edits, only the request changes.
   */
  async #messagesFor(state: S): Promise<Message[]> {
    const prepare = this.#options.prepareMessages;
    if (!prepare) return state.messages;
    const transcript = structuredClone(state.messages);
    const messages = await prepare(transcript, { ...state, messages: transcript });
    if (!Array.isArray(messages)) {
      throw new TypeError(
        `Agent: prepareMessages must return an array of messages, got ${describe(messages)}`,
      );
    }
    if (messages.length === 0) {
      throw new TypeError("Agent: prepareMessages returned no messages; the model needs one");
    }
    messages.forEach((message: unknown, index) => {
      try {
        Message.parse(message);
      } catch (cause) {
        throw new TypeError(
          `Agent: prepareMessages returned a non-message at index ${index}: ${describe(message)}`,
          { cause },
        );
      }
    });
    return messages;
  }

  /** Resolves the model once; a failed resolution (a package not installed) is tried again. */
  #resolveModel(): Promise<LanguageModelObject> {
    this.#model ??= resolveModel(this.#options.model, this.#options.provider).catch(
      (error: unknown) => {
        this.#model = undefined;
        throw error;
      },
    );
    return this.#model;
  }

  /**
   * One request under the node's signal and the request timeout. A stop or node deadline
   * rethrows the node signal's reason (the run loop reports it); a timeout is `MODEL_002`.
   */
  async #attempt(
    request: ReplyRequest,
    messageId: string,
    attempt: number,
    ctx: NodeContext,
  ): Promise<Exclude<ReplyOutcome, { kind: "aborted" }>> {
    ctx.signal.throwIfAborted();
    const controller = new AbortController();
    const abortFromNode = () => controller.abort(ctx.signal.reason);
    ctx.signal.addEventListener("abort", abortFromNode, { once: true });
    const timeoutMs = this.#options.requestTimeoutMs;
    let timedOut = false;
    const timer =
      timeoutMs === null
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            controller.abort(new Error("request timeout"));
          }, timeoutMs);
    try {
      // A structured response is no message of the transcript: its JSON is not streamed.
      const outcome = await streamReply(request, controller.signal, (delta) => {
        if (!request.output) ctx.emit({ type: "message_delta", node: ctx.node, messageId, delta });
      });
      ctx.signal.throwIfAborted();
      if (outcome.kind === "reply") return outcome;
      if (timedOut) throw timeoutError(this.model, timeoutMs!, attempt);
      // Only our two sources abort the request; the node's was checked above.
      if (outcome.kind === "aborted") throw new Error("model request aborted without a reason");
      return outcome;
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", abortFromNode);
    }
  }

  #message(id: string, reply: Reply, ctx: NodeContext): AssistantMessage {
    if (reply.finishReason === "length") {
      ctx.logger.warn(
        { model: this.model, maxTokens: this.#options.maxTokens },
        "Model reply was cut at the token limit; tool call arguments may be incomplete",
      );
    }
    const message: AssistantMessage = {
      id,
      role: "assistant",
      content: reply.text,
      createdAt: new Date().toISOString(),
    };
    if (reply.reasoning.length > 0) message.reasoning = reply.reasoning;
    if (reply.toolCalls.length > 0) message.toolCalls = reply.toolCalls;
    if (reply.usage) message.usage = reply.usage;
    return message;
  }
}

/** A short description of a value for an error message. */
function describe(value: unknown): string {
  if (value === null || typeof value !== "object") return String(value);
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) return Object.prototype.toString.call(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}
