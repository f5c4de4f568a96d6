import type { Context } from "@opentelemetry/api";
import { GraphValidationError, NodeOutputError, NodeTimeoutError } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { withFields, type Logger } from "../events/logger.js";
import type { EmitRunEvent } from "./run-event.js";
import type { Goto } from "../definition/command.js";
import { isGraphNode, type NodeLike, type NodeOutput } from "../definition/graph-node.js";
import {
  applyUpdate,
  type BaseState,
  type Reducer,
  type StateUpdate,
} from "../definition/reducers.js";
import type { Message } from "../messages/message.js";
import { requireKnownRemovals, toUpdate } from "./node-output.js";
import { deepCopy } from "../definition/state-copy.js";
import { diffTranscript } from "./transcript-change.js";
import { requireAppendOnly, requireStorable } from "./step-checks.js";
import { taskResult, taskStart } from "./task-events.js";
import { findSchemaProblem } from "../definition/state-schema.js";
import {
  applyCallUpdates,
  changedFields,
  mergeBranches,
  snapshotFields,
  type BranchWriters,
} from "../definition/branch-merge.js";
import { runWithDeadline, type DeadlineScope } from "../node/deadline.js";
import {
  InterruptSignal,
  isInterruptSignal,
  sleepInterrupt,
  withInterruptScope,
} from "../node/interrupt.js";
import { withRuntime, type NodeContext } from "../node/node-context.js";
import { withNodeRun } from "./node-run.js";
import type { Interrupt } from "../storage/checkpointer.js";
import { routeStep } from "./route.js";
import { requireParent, stepHandoff } from "./handoff.js";
import type { ParentHandoff } from "../storage/checkpoint-record.js";
import { stepTasks, type StepPosition, type StepTask } from "./step-tasks.js";
import type { ResolvedRunConfig } from "./run-config.js";
import type { RunDependencies } from "./run-dependencies.js";
import type { Progress } from "./run-progress.js";
import type { RunWatch } from "../node/run-watch.js";
import type { StepLedger } from "../node/step-ledger.js";

/** One task's share of a step: its node, its update, and the messages it added. */
export interface TaskUpdate<S extends BaseState> {
  node: string;
  update: StateUpdate<S>;
  /** The messages of the merged transcript this task added, in transcript order. */
  messages: Message[];
}

/**
 * What one step produced: each task's update (as returned, made an update), the state with them
 * all merged, and where to go next.
 */
export type StepOutcome<S extends BaseState> =
  | {
      kind: "updated";
      updates: TaskUpdate<S>[];
      state: S;
      next: StepPosition;
      /** Set when a task handed off to the parent graph: the run ends with this step. */
      handoff: ParentHandoff | undefined;
    }
  | { kind: "interrupted"; interrupts: Interrupt[] };

/** What one step needs from its run. */
export interface StepArgs<S extends BaseState> {
  progress: Progress<S>;
  config: ResolvedRunConfig;
  runId: string;
  signal: AbortSignal;
  watch: RunWatch;
  stepLedger: StepLedger;
  emit: EmitRunEvent;
  logger: Logger;
  /** The context of the step's span, for its tool calls' spans. */
  traceContext: Context;
}

/**
 * Runs the step's tasks (the current node, or every task of the frontier, in parallel), then
 * routes, as one cancellable task under the node deadline, each task on its own copy of the
 * state: a step that fails, times out, is stopped or pauses leaves the run's state untouched,
 * and events its nodes send after that are dropped.
 */
export async function runStep<S extends BaseState>(
  deps: RunDependencies<S>,
  args: StepArgs<S>,
): Promise<StepOutcome<S>> {
  const { progress, config } = args;
  const tasks = stepTasks(progress);
  const names = tasks.map((task) => task.node).join(", ");
  for (const task of tasks) requireNode(deps, task.node, config.threadId);
  for (const task of tasks) {
    args.emit({ type: "node_start", node: task.node, step: progress.step });
    args.emit(taskStart(task, progress.step, progress.state));
  }
  let live = true;
  const emit: EmitRunEvent = (event) => {
    if (live) args.emit(event);
  };
  const deadlineAt = config.nodeTimeoutMs === null ? null : Date.now() + config.nodeTimeoutMs;
  try {
    return await runWithDeadline(
      (scope) => tasksThenRoute(deps, { ...args, emit }, tasks, { scope, deadlineAt }),
      {
        parent: args.signal,
        timeoutMs: config.nodeTimeoutMs,
        onTimeout: () => new NodeTimeoutError("node", names, (config.nodeTimeoutMs ?? 0) / 1000),
        manyChildren: true,
      },
    );
  } catch (error) {
    if (isInterruptSignal(error)) return { kind: "interrupted", interrupts: error.interrupts };
    if (isTenxgraphError(error, "NODE_TIMEOUT_001")) {
      for (const task of tasks) deps.metrics.nodeTimeouts.add(1, { node: task.node });
    }
    throw error;
  } finally {
    live = false;
  }
}

/**
 * Runs every task, waiting for all of them to settle (a sibling may have a tool call in flight,
 * whose result must still be recorded), then merges and routes. A failure fails the step (the
 * first in task order); otherwise any interrupt pauses it, with every task's interrupts.
 */
async function tasksThenRoute<S extends BaseState>(
  deps: RunDependencies<S>,
  args: StepArgs<S>,
  tasks: readonly StepTask[],
  limits: NodeLimits,
): Promise<StepOutcome<S>> {
  const { progress } = args;
  const settled = await Promise.allSettled(
    tasks.map((task) =>
      withInterruptScope(
        {
          idBase: `${task.namespace || task.node}:${progress.step}`,
          node: task.node,
          answers: progress.resumeAnswers,
        },
        () => runTask(deps, args, task, limits),
      ),
    ),
  );
  settled.forEach((result, i) => args.emit(taskResult(tasks[i]!, progress.step, result)));
  const failed = settled.find(
    (result) => result.status === "rejected" && !isInterruptSignal(result.reason),
  );
  if (failed) throw (failed as PromiseRejectedResult).reason;
  const interrupts = settled.flatMap((result) =>
    result.status === "rejected" ? (result.reason as InterruptSignal).interrupts : [],
  );
  if (interrupts.length > 0) throw new InterruptSignal(interrupts);
  const results = settled.map((result) => (result as PromiseFulfilledResult<TaskResult<S>>).value);
  const state = mergeTasks(deps, args, results);
  const node = tasks.map((task) => task.node).join(", ");
  requireSchema(deps, state, node);
  requireStorable(state, progress.state.messages, node);
  // A handoff ends the child's run: the parent routes, by the handoff this step records.
  const handoff = stepHandoff(results);
  const next = handoff
    ? { currentNode: null, frontier: null }
    : await routeStep(deps, results, state, progress.frontier?.joins ?? {});
  return { kind: "updated", updates: taskUpdates(results, state, progress), state, next, handoff };
}

/** What one task left: its copy of the state, and the update and `goto` it returned. */
interface TaskResult<S extends BaseState> {
  node: string;
  /** The task's copy of the state after the node ran, before its update was applied. */
  working: S;
  /** The fields of the copy before the node ran (with a `Send`'s input laid over them). */
  baseline: Record<string, unknown> | null;
  update: StateUpdate<S>;
  goto: Goto | undefined;
  /** The parent graph's nodes, when the task handed off (`Command.PARENT`). */
  handoff: string[] | undefined;
}

async function runTask<S extends BaseState>(
  deps: RunDependencies<S>,
  args: StepArgs<S>,
  task: StepTask,
  limits: NodeLimits,
): Promise<TaskResult<S>> {
  const { progress } = args;
  const node = deps.graph.nodes.get(task.node)!;
  const working = copyForNode(progress.state);
  if (task.input) Object.assign(working, deepCopy(task.input));
  // Only a step of several tasks merges copies, and only then are their changes looked for.
  const parallel = progress.frontier !== null;
  const baseline = parallel ? snapshotFields(working) : null;
  const ctx = nodeContext(deps, args, task, limits);
  const output = await callNode(node, working, ctx);
  requireAppendOnly(progress.state.messages, working.messages, task.node);
  const { update, goto, handoff } = toUpdate(output, task.node);
  if (handoff) requireParent(args.config, task.node);
  requireKnownRemovals(working.messages, update.messages, task.node);
  return { node: task.node, working, baseline, update, goto, handoff };
}

/**
 * The state after the step. One task's copy is the state, its update applied (the plain chain,
 * as before fan-out). Several tasks' copies are merged as a tool node merges its parallel
 * calls, in task order: fields a task changed in its copy, or set by an update without a
 * reducer, are whole values (the last kept, with a warning when tasks disagree); the messages
 * it added and its updates of fields with a reducer go through the reducers.
 */
function mergeTasks<S extends BaseState>(
  deps: RunDependencies<S>,
  args: StepArgs<S>,
  results: readonly TaskResult<S>[],
): S {
  const { progress } = args;
  const reducers = deps.graph.reducers as Record<string, Reducer<unknown> | undefined>;
  if (results.length === 1 && results[0]!.baseline === null) {
    const { working, update } = results[0]!;
    // The persisted ids are the transcript's ids unless the node pushed messages itself or
    // earlier steps were not durable; then the whole transcript is checked.
    const knownIds =
      working.messages.length === progress.persisted ? progress.persistedIds : undefined;
    applyUpdate(working, update, deps.graph.reducers, { knownIds, owned: true });
    return working;
  }
  const state = copyForNode(progress.state);
  const known = progress.state.messages.length;
  const branches = results.map((result, index) => {
    const { whole, deltas } = splitUpdate(result.update, reducers);
    const changes = { ...changedFields(result.baseline!, result.working), ...whole };
    const messages = result.working.messages.slice(known);
    return { id: `${result.node}#${index}`, changes, updates: [{ messages }, deltas] };
  });
  mergeBranches(state, branches, reducers, args.logger, NODE_WRITERS);
  applyCallUpdates(state, branches, reducers);
  return state;
}

/** The writers of a parallel step's tasks, for the warnings of {@link mergeBranches}. */
const NODE_WRITERS: BranchWriters = {
  who: "Parallel nodes",
  copies: "their copies of the state",
  order: "task order",
  idsField: "tasks",
  throughReducer: "return it in the node's update so every task's update goes through it",
};

/** An update's fields with a reducer (and its messages), and the rest: whole values. */
function splitUpdate(
  update: Record<string, unknown>,
  reducers: Readonly<Record<string, Reducer<unknown> | undefined>>,
): { whole: Record<string, unknown>; deltas: Record<string, unknown> } {
  const whole: Record<string, unknown> = {};
  const deltas: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(update)) {
    if (field === "messages" || reducers[field]) deltas[field] = value;
    else whole[field] = value;
  }
  return { whole, deltas };
}

/** Each task's update with the messages of the merged transcript it added. */
function taskUpdates<S extends BaseState>(
  results: readonly TaskResult<S>[],
  state: S,
  progress: Progress<S>,
): TaskUpdate<S>[] {
  // Edited messages count as the task's too: they are new to the transcript's readers.
  const { newMessages, replacedMessages } = diffTranscript(progress.state.messages, state.messages);
  const added = [...replacedMessages, ...newMessages];
  if (results.length === 1) {
    return [{ node: results[0]!.node, update: results[0]!.update, messages: added }];
  }
  const claimed = new Set<string>();
  return results.map(({ node, working, update }) => {
    const own = new Set(
      [...working.messages.slice(progress.state.messages.length), ...(update.messages ?? [])].map(
        (message) => message.id,
      ),
    );
    const messages = added.filter((message) => own.has(message.id) && !claimed.has(message.id));
    for (const message of messages) claimed.add(message.id);
    return { node, update, messages };
  });
}

/**
 * With a state schema, the state after the node (its update, its tools' updates, whatever it
 * changed in its copy) must match it: checked before the step's write, so a thread never holds
 * a state its nodes' types do not describe.
 */
function requireSchema<S extends BaseState>(deps: RunDependencies<S>, state: S, node: string) {
  if (!deps.graph.schema) return;
  const problem = findSchemaProblem(deps.graph.schema, state);
  if (problem) {
    throw new NodeOutputError(
      node,
      `left a state that does not match the graph's schema: ${problem}`,
    );
  }
}

function requireNode<S extends BaseState>(
  deps: RunDependencies<S>,
  name: string,
  threadId: string,
): NodeLike<S> {
  const node = deps.graph.nodes.get(name);
  if (node) return node;
  throw new GraphValidationError(
    "GRAPH_001",
    `Thread '${threadId}' stands at node '${name}', which this graph does not have`,
  );
}

/** The node's signal (made when first read) and when its deadline fires. */
interface NodeLimits {
  scope: DeadlineScope;
  deadlineAt: number | null;
}

function nodeContext<S extends BaseState>(
  deps: RunDependencies<S>,
  args: StepArgs<S>,
  { node, namespace, input }: StepTask,
  { scope, deadlineAt }: NodeLimits,
): NodeContext {
  const ctx: NodeContext = {
    threadId: args.config.threadId,
    runId: args.runId,
    userId: args.progress.userId,
    node,
    step: args.progress.step,
    get signal() {
      return scope.signal;
    },
    deadlineAt,
    logger: withFields(args.logger, { node }),
    emit: args.emit,
    write: (data) => args.emit({ type: "custom", node, data }),
    newId: deps.ids,
    store: deps.store,
    sleep: sleepInterrupt,
  };
  // Out of the node's reach: only ToolNode gets the runtime, and through it the ledger.
  withNodeRun(ctx, { services: deps, config: args.config, nodes: deps.graph.nodes });
  return withRuntime(ctx, {
    nodeAbort: scope,
    checkpointer: deps.checkpointer,
    metrics: deps.metrics,
    tracing: deps.tracing,
    traceContext: args.traceContext,
    ids: deps.ids,
    toolTimeoutMs: args.config.toolTimeoutMs,
    resumeAnswers: args.progress.resumeAnswers,
    watch: args.watch,
    stepLedger: args.stepLedger,
    claimStaleAfterMs: deps.claimStaleAfterMs,
    isEndedLocalRun: deps.isEndedLocalRun,
    faultPoints: deps.faultPoints,
    remoteTools: args.config.remoteTools,
    ledgerNamespace: namespace,
    send: input && sendFields(input, args.progress.state),
    reducers: deps.graph.reducers as Record<string, Reducer<unknown> | undefined>,
    toolRenames: deps.graph.migrations.toolRenames,
  });
}

/** The fields a `Send` input sets, and those of them the state does not have (the task's own). */
function sendFields(
  input: Record<string, unknown>,
  state: BaseState,
): { fields: string[]; ownFields: Set<string> } {
  const fields = Object.keys(input).filter((field) => field !== "messages");
  return { fields, ownFields: new Set(fields.filter((field) => !Object.hasOwn(state, field))) };
}

async function callNode<S extends BaseState>(
  node: NodeLike<S>,
  state: S,
  ctx: NodeContext,
): Promise<NodeOutput<S>> {
  return isGraphNode(node) ? node.run(state, ctx) : node(state, ctx);
}

/** The node's own copy: fields deep-copied, the transcript shallow (messages are immutable). */
function copyForNode<S extends BaseState>(state: S): S {
  const { messages, ...values } = state;
  return { ...deepCopy(values), messages: messages.slice() } as unknown as S;
}
