import {
  INVALID_SPAN_CONTEXT,
  SpanKind,
  SpanStatusCode,
  isSpanContextValid,
  trace,
  type Context,
  type Span,
  type Tracer,
} from "@opentelemetry/api";

/** The tracer name every tenxgraph span is created under (the meter's name too). */
export const TRACER_NAME = "10xgraph";

/** The options of the spans that the conventions make `INTERNAL`: one object, never rebuilt. */
const INTERNAL = Object.freeze({ kind: SpanKind.INTERNAL });

/** Options of `compile({ tracing })`. Every attribute is listed in docs/events-logs-metrics.md. */
export interface TracingOptions {
  /** OpenTelemetry tracer (default: the global tracer named `10xgraph`). */
  tracer?: Tracer;
  /** The graph's name in its run spans (`invoke_agent <name>`, `gen_ai.agent.name`). */
  name?: string;
  /**
   * Record tool call arguments and results on tool spans (`gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`). Off by default: they may hold personal data.
   */
  recordContent?: boolean;
}

/** How a tool call span ended (`tenxgraph.tool.outcome`). */
export type ToolCallOutcome =
  /** The tool ran (this attempt). */
  | "ran"
  /** Its result came from the ledger: the tool did not run again. */
  | "replayed"
  /** Found started but never recorded, and settled by its `onInDoubt` policy without running. */
  | "in_doubt"
  /** Its claim was taken over by another execution: this attempt's result was not recorded. */
  | "fenced"
  /**
   * Answered without running or replaying it: refused before the ledger (unknown tool, bad
   * arguments; `error.type` names the code), or its message was edited since it ran.
   */
  | "refused";

/**
 * The runtime's tracer, made once per compiled graph. Without a registered OpenTelemetry SDK
 * the tracer gives non-recording spans: each span here is started by name only, and its
 * attributes are built only when `span.isRecording()`, so a run without an SDK builds no
 * attribute object and no span context.
 */
export class RuntimeTracing {
  readonly #tracer: Tracer;
  readonly #runSpanName: string;
  readonly #name: string | undefined;
  readonly recordContent: boolean;

  constructor(options: TracingOptions = {}) {
    this.#tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
    this.#name = options.name;
    this.#runSpanName = options.name ? `invoke_agent ${options.name}` : "invoke_agent";
    this.recordContent = options.recordContent === true;
  }

  /** The span of one run (`invoke_agent`), a child of `parent` (the caller's context). */
  startRun(parent: Context, threadId: string, runId: string, graphId: string | null): TraceScope {
    const name = graphId ? `invoke_agent ${graphId}` : this.#runSpanName;
    const span = this.#tracer.startSpan(name, INTERNAL, parent);
    if (span.isRecording()) {
      span.setAttributes({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": threadId,
        "tenxgraph.thread.id": threadId,
        "tenxgraph.run.id": runId,
      });
      const agent = graphId ?? this.#name;
      if (agent) span.setAttributes({ "gen_ai.agent.name": agent, "tenxgraph.graph": agent });
    }
    return new TraceScope(span, parent);
  }

  /** The span of one step (`step <node>`), a child of its run's span. */
  startStep(parent: Context, nodes: string, step: number): TraceScope {
    const span = this.#tracer.startSpan(`step ${nodes}`, undefined, parent);
    if (span.isRecording()) {
      span.setAttributes({ "tenxgraph.node": nodes, "tenxgraph.step": step });
    }
    return new TraceScope(span, parent);
  }

  /** The span of one tool call (`execute_tool <name>`), a child of its step's span. */
  startToolCall(parent: Context, call: TracedToolCall): ToolCallTrace {
    const { tool } = call;
    const span = this.#tracer.startSpan(`execute_tool ${tool.name}`, INTERNAL, parent);
    if (span.isRecording()) {
      span.setAttributes({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool.name,
        "gen_ai.tool.call.id": call.call.id,
        "gen_ai.tool.type": "function",
        "tenxgraph.tool.policy": policyName(tool.onInDoubt),
        "tenxgraph.tool.idempotency_key": call.unscopedKey !== null,
      });
      if (call.key !== null) span.setAttribute("tenxgraph.ledger.key", call.key);
      if (this.recordContent) {
        span.setAttribute("gen_ai.tool.call.arguments", call.call.arguments);
      }
    }
    return new ToolCallTrace(span, parent, this.recordContent);
  }

  /**
   * The span of a call refused before the ledger (unknown tool, bad arguments): ended at once,
   * outcome `refused`, `error.type` the code its error message names.
   */
  refusedCall(
    parent: Context,
    call: { readonly id: string; readonly name: string },
    code: string,
  ): void {
    const span = this.#tracer.startSpan(`execute_tool ${call.name}`, INTERNAL, parent);
    if (span.isRecording()) {
      span.setAttributes({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
        "tenxgraph.tool.outcome": "refused",
        "error.type": code,
      });
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }
}

/** What a tool call span names of its call (a prepared call of `ToolNode` is one). */
export interface TracedToolCall {
  /** The model's call: its id, and its raw arguments (recorded only with `recordContent`). */
  readonly call: { readonly id: string; readonly arguments: string };
  readonly tool: { readonly name: string; readonly onInDoubt: string | object };
  /** The ledger key; `null` when the call runs without the ledger. */
  readonly key: string | null;
  /** The tool's own idempotency key; `null` when it declares none. */
  readonly unscopedKey: string | null;
}

/** The name of an `onInDoubt` policy: a reconcile function is `reconcile`. */
export function policyName(policy: string | object): string {
  return typeof policy === "string" ? policy : "reconcile";
}

/** A started span and the context its children start in. */
export class TraceScope {
  readonly span: Span;
  /** The span's context for children: the parent's when the span carries no trace at all. */
  readonly context: Context;

  constructor(span: Span, parent: Context) {
    this.span = span;
    // Without an SDK the span is invalid and the parent is kept, so no context is allocated;
    // a span sampled out still carries its trace, so its children are sampled out with it.
    // The identity test spares the id checks for the no-SDK span, which has the invalid context.
    const spanContext = span.spanContext();
    const traced = spanContext !== INVALID_SPAN_CONTEXT && isSpanContextValid(spanContext);
    this.context = traced ? trace.setSpan(parent, span) : parent;
  }

  get recording(): boolean {
    return this.span.isRecording();
  }

  /** The span as a W3C `traceparent`, to be linked to later; `undefined` when not recording. */
  get traceparent(): string | undefined {
    if (!this.span.isRecording()) return undefined;
    const { traceId, spanId, traceFlags } = this.span.spanContext();
    return `00-${traceId}-${spanId}-0${traceFlags & 1}`;
  }

  /** Links the span to the one a `traceparent` names (see {@link traceparent}); ignores a malformed one. */
  linkTo(traceparent: string | undefined, relation: string): void {
    if (traceparent === undefined || !this.span.isRecording()) return;
    const parts = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/.exec(traceparent);
    if (!parts) return;
    const [, traceId, spanId, sampled] = parts;
    this.span.addLink({
      context: { traceId: traceId!, spanId: spanId!, traceFlags: Number(sampled), isRemote: true },
      attributes: { "tenxgraph.link": relation },
    });
  }

  /** Ends the span with an error: `error.type` is the error's code, or its class name. */
  fail(error: unknown): void {
    if (this.span.isRecording()) {
      const type = errorType(error);
      this.span.setAttribute("error.type", type);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
    }
    this.span.end();
  }

  end(): void {
    this.span.end();
  }
}

/** A tool call's span, told by the ledger what became of the call. */
export class ToolCallTrace extends TraceScope {
  readonly #recordContent: boolean;
  #ran = false;
  #inDoubt = false;

  constructor(span: Span, parent: Context, recordContent: boolean) {
    super(span, parent);
    this.#recordContent = recordContent;
  }

  /** The tool begins, as `attempt` of its ledger claim (`null`: run without the ledger). */
  running(attempt: number | null): void {
    this.#ran = true;
    if (attempt !== null && this.span.isRecording()) {
      this.span.setAttribute("tenxgraph.tool.attempt", attempt);
    }
  }

  /** The call was found in doubt: an event on the span, before its policy acts. */
  inDoubt(attempt: number, policy: string): void {
    this.#inDoubt = true;
    if (this.span.isRecording()) {
      this.span.addEvent("tenxgraph.tool.in_doubt", {
        "tenxgraph.tool.attempt": attempt,
        "tenxgraph.tool.policy": policy,
      });
    }
  }

  /** The call settled: its outcome, and whether its message is a tool error. */
  settled(replayed: boolean, isError: boolean, result: unknown): void {
    if (this.span.isRecording()) {
      this.span.setAttribute("tenxgraph.tool.outcome", this.#outcome(replayed));
      if (isError) {
        this.span.setAttribute("error.type", "tool_error");
        this.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      if (this.#recordContent) {
        this.span.setAttribute("gen_ai.tool.call.result", JSON.stringify(result));
      }
    }
    this.span.end();
  }

  /** The call threw out of the node: fenced when its claim was taken over. */
  thrown(error: unknown, fenced: boolean): void {
    if (fenced && this.span.isRecording()) {
      this.span.setAttribute("tenxgraph.tool.outcome", "fenced");
    }
    this.fail(error);
  }

  #outcome(replayed: boolean): ToolCallOutcome {
    if (replayed) return "replayed";
    if (this.#ran) return "ran";
    return this.#inDoubt ? "in_doubt" : "refused";
  }
}

/** The trace id a `traceparent` recorded by {@link TraceScope.traceparent} names; `null` for none. */
export function traceIdOf(traceparent: string | undefined): string | null {
  if (traceparent === undefined) return null;
  return /^00-([0-9a-f]{32})-[0-9a-f]{16}-0[01]$/.exec(traceparent)?.[1] ?? null;
}

/** A low-cardinality name for an error: its stable code, else its class name. */
function errorType(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string") return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === "string") return name;
  }
  return "_OTHER";
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
