import { NO_BREAKPOINTS } from "../runtime/breakpoints.js";
import { withFields } from "../events/logger.js";
import { NODE_EVENT_TYPES, type NodeEvent } from "../events/stream-event.js";
import type { RunEvent } from "../runtime/run-event.js";
import { executeRun } from "../runtime/execute-run.js";
import { InterruptSignal } from "../node/interrupt.js";
import {
  internalContext,
  type InternalNodeContext,
  type NodeContext,
} from "../node/node-context.js";
import { nodeRunOf } from "../runtime/node-run.js";
import type { RunDependencies } from "../runtime/run-dependencies.js";
import type { RunInput } from "../runtime/run-result.js";
import { StopSignal } from "../runtime/stop-signal.js";
import type { Interrupt, ThreadCheckpoint } from "../storage/checkpointer.js";
import type { GraphDefinition } from "../definition/graph-definition.js";
import type { GraphNode, NodeOutput, VersionShape } from "../definition/graph-node.js";
import { requireOwnChild } from "./subgraph-adopt.js";
import { Command } from "../definition/command.js";
import { GraphValidationError } from "../errors/errors.js";
import type { BaseState, StateUpdate } from "../definition/reducers.js";

/** What a subgraph node runs of a compiled graph: its definition (`CompiledGraph.definition`). */
export interface SubgraphSource<C extends BaseState> {
  readonly definition: GraphDefinition<C>;
}

/** How a subgraph's state maps to and from its parent's (default: the keys they share). */
export interface SubgraphOptions<P extends BaseState, C extends BaseState> {
  /**
   * The child's input from the parent's state (with a `Send`'s fields laid over it); default: the
   * parent's transcript, the fields the child has and those of the `Send` that started the task.
   */
  input?: (state: P) => Partial<C>;
  /** The parent's update from the child's final state; default: its new messages and the fields the parent has. */
  output?: (state: C) => StateUpdate<P>;
}

/**
 * A compiled graph run as a node of another (`addNode("WORKER", workerApp)`, or
 * `addNode("WORKER", new Subgraph(workerApp, { input, output }))` to map state). Each time the
 * node runs, the child graph runs a turn on a thread of its own in the parent's store (see
 * {@link childThreadId}), with the parent's user, limits and signals: its steps, transcript and
 * tool ledger are written as any thread's are, so a crash inside it continues the child from
 * its last step and replays its recorded tool calls. An interrupt inside pauses the parent; the
 * parent's interrupt id is the child's prefixed by the node (`WORKER|ASK:1`), and answering it
 * through the parent resumes the child. A stop or deadline of the parent stops the child.
 * The child's thread records the parent's as its `parentThreadId`: `listThreads()` leaves it
 * out (`listThreads({ parentThreadId })` lists it), and deleting the parent deletes it.
 */
export class Subgraph<
  P extends BaseState,
  C extends BaseState = BaseState,
> implements GraphNode<P> {
  readonly graph: SubgraphSource<C>;
  readonly #options: SubgraphOptions<P, C>;

  constructor(graph: SubgraphSource<C>, options: SubgraphOptions<P, C> = {}) {
    this.graph = graph;
    this.#options = { ...options };
  }

  /** The child graph's version is part of the parent's. */
  versionShape(): VersionShape {
    return { subgraph: this.graph.definition.version.fingerprint };
  }

  async run(state: P, nodeContext: NodeContext): Promise<NodeOutput<P>> {
    const ctx = internalContext(nodeContext);
    const run = nodeRunOf(nodeContext);
    const namespace = ctx.runtime.ledgerNamespace || ctx.node;
    const threadId = childThreadId(ctx.threadId, namespace, ctx.step);
    const deps: RunDependencies<C> = {
      ...run.services,
      graph: this.graph.definition,
      logger: withFields(ctx.logger, { subgraph: threadId }),
    };
    // Each answer resumes the child once: an interrupt it raises again goes back to the caller.
    const resumed = new Set<string>();
    for (let first = true; ; first = false) {
      const read = await deps.checkpointer.getCheckpointAndStops(threadId);
      const { checkpoint } = read;
      // A thread already at the child's id must be this parent's own child, never a squatter's.
      if (first && checkpoint) requireOwnChild(checkpoint, ctx.threadId, ctx.userId);
      const input = this.#nextInput(checkpoint, state, ctx, namespace, resumed);
      const config = {
        ...run.config,
        threadId,
        // Listed under the parent's thread and deleted with it.
        parentThreadId: ctx.threadId,
        userId: ctx.userId,
        signal: ctx.signal,
        // Every child step is durable: a crash must find where the child stood.
        durableCheckpointEveryStep: true,
        // The parent's breakpoints name its own nodes, never the child's.
        breakpoints: NO_BREAKPOINTS,
        loadedThread: read,
        // The child's run span is a child of the subgraph node's step span.
        traceParent: ctx.runtime.traceContext,
      };
      const result = await executeRun(
        deps,
        config,
        input,
        (event) => forwardEvent(event, namespace, ctx),
        new AbortController(),
        ctx.newId(),
      );
      if (result.status === "completed") {
        const output = this.#outputOf(result.state, state, ctx);
        return handedOff(await deps.checkpointer.getCheckpoint(threadId), output, run.nodes, ctx);
      }
      // Stopped by the parent's signal (a stop, its node deadline): the parent ends as that says.
      if (result.status === "stopped") throw ctx.signal.reason ?? new StopSignal("signal");
    }
  }

  /**
   * What the child runs with: a new turn when it has no thread yet, an answer the parent was
   * given to one of its pending interrupts, or `null` to continue it (after a crash or a stop,
   * or to read the state of a turn that completed before the parent's step was written).
   */
  #nextInput(
    checkpoint: ThreadCheckpoint | null,
    state: P,
    ctx: InternalNodeContext,
    namespace: string,
    resumed: Set<string>,
  ): RunInput<C> {
    if (!checkpoint) return this.#inputOf(state, ctx);
    if (checkpoint.status !== "interrupted") return null;
    const answers = ctx.runtime.resumeAnswers;
    const answered = checkpoint.interrupts.find(
      (pending) =>
        !resumed.has(pending.id) &&
        Object.hasOwn(answers, parentInterruptId(namespace, pending.id)),
    );
    if (!answered) {
      throw new InterruptSignal(
        checkpoint.interrupts.map((pending) => asParentInterrupt(pending, namespace, ctx.node)),
      );
    }
    resumed.add(answered.id);
    return { resume: answers[parentInterruptId(namespace, answered.id)], interruptId: answered.id };
  }

  /**
   * The child's first input: the parent's transcript, the fields the child declares, and every
   * field a `Send` gave this task (LangGraph's map-reduce: the child works on what it was sent,
   * declared or not). `state` and the `Send` input are the same on a replay after a crash.
   */
  #inputOf(state: P, ctx: InternalNodeContext): Partial<C> {
    if (this.#options.input) return this.#options.input(state);
    const fields = childFields(this.graph);
    for (const field of ctx.runtime.send?.fields ?? []) fields.add(field);
    const input: Record<string, unknown> = { messages: state.messages };
    for (const [field, value] of Object.entries(state)) {
      if (field !== "messages" && fields.has(field)) input[field] = value;
    }
    return input as Partial<C>;
  }

  /**
   * The parent's update: the child's new messages and the fields the parent has, less those only
   * a `Send` gave this task (they were the branch's input, not the parent's state).
   */
  #outputOf(child: C, parent: P, ctx: InternalNodeContext): StateUpdate<P> {
    if (this.#options.output) return this.#options.output(child);
    const sendOwn = ctx.runtime.send?.ownFields;
    const known = new Set(parent.messages.map((message) => message.id));
    const update: Record<string, unknown> = {
      messages: child.messages.filter((message) => !known.has(message.id)),
    };
    for (const [field, value] of Object.entries(child)) {
      if (field === "messages" || sendOwn?.has(field)) continue;
      if (Object.hasOwn(parent, field)) update[field] = value;
    }
    return update as StateUpdate<P>;
  }
}

/**
 * The parent's update, and where the child's last step handed the parent to when it did
 * (`Command.PARENT`): read from the child's last write, so a replay of the parent's step after
 * a crash goes the same way without running the child again.
 */
function handedOff<P extends BaseState>(
  last: ThreadCheckpoint | null,
  output: StateUpdate<P>,
  nodes: ReadonlyMap<string, unknown>,
  ctx: InternalNodeContext,
): NodeOutput<P> {
  const goto = last?.handoff?.goto;
  if (!goto) return output;
  const unknown = goto.filter((target) => !nodes.has(target));
  if (unknown.length > 0) {
    throw new GraphValidationError(
      "GRAPH_011",
      `The subgraph of node '${ctx.node}' handed off to ${unknown.map((name) => `'${name}'`).join(", ")}, ` +
        `which the parent graph does not have (its nodes: ${[...nodes.keys()].join(", ")})`,
    );
  }
  return new Command({ update: output, goto });
}

/**
 * The thread a subgraph node runs its child on: derived from the parent's thread, the node's
 * namespace and the parent's step, so the same step finds the same child after a crash, and each
 * step starts a child of its own (a completed one is read, never run again).
 */
export function childThreadId(parentThreadId: string, namespace: string, step: number): string {
  return `${parentThreadId}|${namespace}@${step}`;
}

/**
 * True when `threadId` has the shape {@link childThreadId} gives (`<parent>|<namespace>@<step>`):
 * a host refuses to create such a thread, where a parent's subgraph would later look for its own.
 */
export function isChildThreadId(threadId: string): boolean {
  return /\|[^|]+@\d+$/.test(threadId);
}

/**
 * Shows the child's node events in the parent's stream, with the node's namespace; its run,
 * state and value events are its own thread's, not the parent's, and stay inside.
 */
function forwardEvent(event: RunEvent, namespace: string, ctx: NodeContext): void {
  if (!NODE_EVENT_TYPES.has(event.type)) return;
  const from = event as NodeEvent;
  ctx.emit({ ...from, namespace: from.namespace ? `${namespace}|${from.namespace}` : namespace });
}

/** The id under which the parent reports (and is answered for) a child's interrupt. */
function parentInterruptId(namespace: string, childId: string): string {
  return `${namespace}|${childId}`;
}

function asParentInterrupt(pending: Interrupt, namespace: string, node: string): Interrupt {
  return { ...pending, id: parentInterruptId(namespace, pending.id), node };
}

/** The fields a child graph's state has: those of its initial state and of its schema. */
function childFields(graph: {
  definition: { initialState: object; schema?: unknown };
}): Set<string> {
  const { initialState, schema } = graph.definition;
  const shape = (schema as { shape?: Record<string, unknown> } | null | undefined)?.shape ?? {};
  return new Set([...Object.keys(initialState), ...Object.keys(shape)]);
}

/** True for a compiled graph, from this or another copy of the package. */
export function isCompiledGraph(value: unknown): value is SubgraphSource<BaseState> {
  const graph = value as { definition?: { nodes?: unknown }; invoke?: unknown } | null;
  return (
    typeof graph === "object" &&
    graph !== null &&
    typeof graph.invoke === "function" &&
    graph.definition?.nodes instanceof Map
  );
}
