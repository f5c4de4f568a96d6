import type { Context } from "@opentelemetry/api";
import type { RuntimeTracing } from "../events/tracing.js";
import type { Logger } from "../events/logger.js";
import type { RuntimeMetrics } from "../events/metrics.js";
import type { EmitEvent } from "../events/stream-event.js";
import type { IdGenerator } from "../messages/ids.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import type { Store } from "../store/store.js";
import type { AbortParent } from "./deadline.js";
import type { FaultInjector } from "./fault-points.js";
import type { RemoteToolSpec } from "./remote-tool-spec.js";
import type { RunWatch } from "./run-watch.js";
import type { StepLedger } from "./step-ledger.js";

/** What a node gets besides its state. */
export interface NodeContext {
  readonly threadId: string;
  readonly runId: string;
  readonly userId: string | null;
  readonly node: string;
  /** The thread's step this node runs as. */
  readonly step: number;
  /** Aborts on the node's deadline, on stop, and when the stream is closed. */
  readonly signal: AbortSignal;
  /**
   * When the node's deadline aborts `signal` (epoch ms), or `null` without a deadline: lets a
   * node cap its own waits (a model's retry-after) by the time it really has left.
   */
  readonly deadlineAt: number | null;
  /** Bound to `threadId`, `runId` and `node`. */
  readonly logger: Logger;
  /** Sends an event to `stream()` consumers (model nodes send `message_delta`). */
  readonly emit: EmitEvent;
  /**
   * Sends `data` to `stream(input, { streamMode: "custom" })` consumers (progress, partial
   * results); other modes do not show it, `debug` aside. Dropped once the node has ended, and a
   * no-op under `invoke()`.
   */
  write(data: unknown): void;
  /**
   * A new id from the graph's id generator (`CompileOptions.ids`, default UUIDv7): model nodes
   * name their replies with it, so the ids of a run come from one source.
   */
  newId(): string;
  /**
   * The graph's long-term store (`compile({ store })`), shared across threads. Without one,
   * every call fails with `STORE_001`. A node's writes are not in the ledger: a node that runs
   * again (after a crash, a retry) writes again, so write idempotently (`put` by a stable key).
   */
  readonly store: Store;
  /**
   * Pauses the run durably for `ms` milliseconds: the run ends `interrupted` with an interrupt
   * whose `resumeAt` is now + `ms`, and a host that runs timers (`tenxgraph api`) resumes the
   * thread then, once, in whatever process is up. The node runs again from its start and this
   * call returns at once. A resume before the time (`{ resume, interruptId }`) ends the sleep
   * early. `ms` must be a finite number at least 0 (`TIMER_001`). Await it or not: it throws
   * the pause synchronously.
   */
  sleep(ms: number): Promise<void>;
}

/**
 * Inside this package only: a node's context with the runtime's services, which `ToolNode` and
 * the ledger use. Nodes never get it: the checkpointer in it writes the ledger and the fencing
 * protects the ledger only if every write goes through the ledger's code.
 */
export interface InternalNodeContext extends NodeContext {
  readonly runtime: NodeRuntime;
}

/** The runtime's services for the tool ledger; internal, never given to nodes. */
export interface NodeRuntime {
  /**
   * What aborts the node: its deadline's scope, which says whether it aborted and passes the
   * abort on to the node's tool calls without making the node's `signal` (an `AbortSignal`
   * costs microseconds, and a tool node whose tools never read theirs does not need it).
   */
  readonly nodeAbort: AbortParent;
  readonly checkpointer: Checkpointer;
  readonly metrics: RuntimeMetrics;
  readonly tracing: RuntimeTracing;
  /** The context of the step's span: a tool call's span is its child. */
  readonly traceContext: Context;
  readonly ids: IdGenerator;
  /** Default deadline of a tool call; `null` disables it. */
  readonly toolTimeoutMs: number | null;
  /** Answers to interrupts of this node, keyed by interrupt id. */
  readonly resumeAnswers: Readonly<Record<string, unknown>>;
  /** Heartbeats claims while their tools run. */
  readonly watch: RunWatch;
  /** Results and claims that ride in the run's step writes (ledger protocol v2). */
  readonly stepLedger: StepLedger;
  /**
   * The lease of this runtime's claims: a claim it makes, or renews by a heartbeat, counts as
   * abandoned once this long has passed on the store's clock without another heartbeat.
   */
  readonly claimStaleAfterMs: number;
  /** True when `runId` is a run of this graph instance that has ended. */
  isEndedLocalRun(runId: string): boolean;
  readonly faultPoints: FaultInjector | undefined;
  /** The run's remote tools (`RunConfig.remoteTools`), as specs: tool nodes can call them too. */
  readonly remoteTools: readonly RemoteToolSpec[];
  /**
   * The namespace of the branch this node runs in (`""` in the plain chain), which its tool
   * calls' ledger keys carry (see `inNamespace`).
   */
  readonly ledgerNamespace: string;
  /**
   * The fields a `Send` gave this task (its input, read back from the step's write, so a replay
   * after a crash has the same), and of them those the parent's state did not hold: a subgraph
   * node hands the first to its child and keeps the second out of the parent's update.
   */
  readonly send?: { fields: readonly string[]; ownFields: ReadonlySet<string> };
  /**
   * The graph's field reducers, for merging parallel branches: definition/'s `Reducer`, spelled
   * out because what a node gets lies below what a graph is.
   */
  readonly reducers: Readonly<Record<string, FieldReducer | undefined>>;
  /**
   * Former tool names to the tools that replace them (`compile({ migrations })`): a call of a
   * former name runs its replacement, which owns the former's ledger entries.
   */
  readonly toolRenames: ReadonlyMap<string, string>;
}

/** A field's reducer, of any field type. */
type FieldReducer = (current: unknown, update: unknown) => unknown;

/** The runtime of each context the run loop made, out of reach of the node it is given to. */
const runtimes = new WeakMap<NodeContext, NodeRuntime>();

/** Makes `ctx` carry `runtime` for {@link internalContext}; returns `ctx`. */
export function withRuntime(ctx: NodeContext, runtime: NodeRuntime): NodeContext {
  runtimes.set(ctx, runtime);
  return ctx;
}

/**
 * The context `ctx` with its runtime, for `ToolNode`. Fails for a context the run loop did not
 * make (a node called by hand): tools run through the ledger or not at all.
 */
export function internalContext(ctx: NodeContext): InternalNodeContext {
  const runtime = runtimes.get(ctx);
  if (!runtime) {
    throw new TypeError("ToolNode.run: the context was not made by a graph run; run it in a graph");
  }
  const internal: NodeContext & { runtime?: NodeRuntime } = copyContext(ctx);
  internal.runtime = runtime;
  return internal as InternalNodeContext;
}

/**
 * A copy of `ctx`, for a context that adds a field to it (the tool node's runtime, an
 * entrypoint's `previous`). Field by field: spreading (or `Object.assign` of) a context with a
 * getter takes V8's slow path, microseconds per tool step on Node 20. `signal` stays a getter:
 * reading it makes the signal, and the tool node's own checks read `runtime.nodeAbort` instead.
 */
export function copyContext(ctx: NodeContext): NodeContext {
  return {
    threadId: ctx.threadId,
    runId: ctx.runId,
    userId: ctx.userId,
    node: ctx.node,
    step: ctx.step,
    get signal() {
      return ctx.signal;
    },
    deadlineAt: ctx.deadlineAt,
    logger: ctx.logger,
    emit: ctx.emit,
    write: ctx.write,
    newId: ctx.newId,
    store: ctx.store,
    sleep: ctx.sleep,
  };
}

/**
 * `key` inside a branch's namespace: `<namespace>|<key>`, the key itself in the plain chain
 * (namespace `""`), so threads that never fan out keep the keys they always had. A namespace is
 * `<node>` for a node of a parallel step and `<node>:<task index>` for a `Send`; the ledger
 * never parses it, it only has to be the same each time the branch runs (it is derived from the
 * step's written frontier, so a replay after a crash derives it again).
 */
export function inNamespace(namespace: string, key: string): string {
  return namespace === "" ? key : `${namespace}|${key}`;
}
