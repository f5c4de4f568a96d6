import {
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import type { AssistantMessage } from "@tenxgraph/core";
import type { Failure } from "./classify-failure.js";
import type { ReplyRequest } from "./stream-reply.js";

/** The tracer name of tenxgraph's spans, the core's too. */
const TRACER_NAME = "10xgraph";
const CLIENT = Object.freeze({ kind: SpanKind.CLIENT });

/** Spans of an {@link Agent}'s model calls; every attribute is in docs/events-logs-metrics.md. */
export interface AgentTracing {
  /** OpenTelemetry tracer (default: the global tracer named `10xgraph`). */
  tracer?: Tracer;
  /**
   * Record the messages sent and the reply (`gen_ai.system_instructions`,
   * `gen_ai.input.messages`, `gen_ai.output.messages`). Off by default: they may hold personal data.
   */
  recordContent?: boolean;
}

/**
 * The span of one model step (`chat <model>`), from the first request to the reply, its
 * retries as events. It is a child of the active span: the node's step, when an OpenTelemetry
 * context manager is registered (the Node SDK registers one). Attributes are built only when
 * the span records.
 */
export class ChatSpan {
  readonly #span: Span;
  readonly #recordContent: boolean;

  private constructor(span: Span, recordContent: boolean) {
    this.#span = span;
    this.#recordContent = recordContent;
  }

  static start(tracing: AgentTracing, request: ReplyRequest): ChatSpan {
    const tracer = tracing.tracer ?? trace.getTracer(TRACER_NAME);
    const { modelId, provider } = request.model;
    const span = tracer.startSpan(`chat ${modelId}`, CLIENT, context.active());
    const recordContent = tracing.recordContent === true;
    if (span.isRecording()) {
      span.setAttributes({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": modelId,
      });
      if (request.temperature !== undefined) {
        span.setAttribute("gen_ai.request.temperature", request.temperature);
      }
      if (request.maxTokens !== undefined) {
        span.setAttribute("gen_ai.request.max_tokens", request.maxTokens);
      }
      if (recordContent) {
        if (request.system !== undefined) {
          span.setAttribute("gen_ai.system_instructions", request.system);
        }
        span.setAttribute("gen_ai.input.messages", JSON.stringify(request.messages));
      }
    }
    return new ChatSpan(span, recordContent);
  }

  /** A transient failure, retried after `delayMs`: an event on the span. */
  retry(attempt: number, failure: Failure, delayMs: number): void {
    if (!this.#span.isRecording()) return;
    this.#span.addEvent("tenxgraph.model.retry", {
      "tenxgraph.model.attempt": attempt,
      "error.type": failure.statusCode === null ? "_OTHER" : String(failure.statusCode),
      "tenxgraph.model.retry_delay_ms": Math.round(delayMs),
    });
  }

  /** The reply: its finish reason and token usage; the span ends. */
  replied(message: AssistantMessage, finishReason: string | undefined, attempts: number): void {
    const span = this.#span;
    if (span.isRecording()) {
      span.setAttribute("tenxgraph.model.attempts", attempts);
      if (finishReason !== undefined) {
        span.setAttribute("gen_ai.response.finish_reasons", [finishReason]);
      }
      const { usage } = message;
      if (usage?.inputTokens !== undefined) {
        span.setAttribute("gen_ai.usage.input_tokens", usage.inputTokens);
      }
      if (usage?.outputTokens !== undefined) {
        span.setAttribute("gen_ai.usage.output_tokens", usage.outputTokens);
      }
      if (this.#recordContent) {
        const { content, toolCalls } = message;
        span.setAttribute(
          "gen_ai.output.messages",
          JSON.stringify([{ role: "assistant", content, toolCalls: toolCalls ?? [] }]),
        );
      }
    }
    span.end();
  }

  /** The step failed (its error's code, `MODEL_005` for retries exhausted); the span ends. */
  failed(error: unknown): void {
    const span = this.#span;
    if (span.isRecording()) {
      const code = (error as { code?: unknown } | null)?.code;
      span.setAttribute("error.type", typeof code === "string" ? code : "_OTHER");
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
    }
    span.end();
  }
}
