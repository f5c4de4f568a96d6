import { GraphValidationError, NodeOutputError, NodeTimeoutError } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { withFields, type Logger } from "../events/logger.js";
import type { EmitRunEvent } from "./run-event.js";
import { END, type Edge } from "../graph/edges.js";
import { isGraphNode, type NodeLike, type NodeOutput } from "../graph/graph-node.js";
import { applyUpdate, type BaseState, type Reducer, type StateUpdate } from "../graph/reducers.js";
import { messageSchema, type Message } from "../messages/message.js";
import { deepCopy } from "../graph/state-copy.js";
import { findSchemaProblem } from "../graph/state-schema.js";
import { findNonJson } from "../storage/json-check.js";
import { runWithDeadline, type DeadlineScope } from "./deadline.js";
import { isInterruptSignal, withInterruptScope } from "./interrupt.js";
import { withRuntime, type NodeContext } from "./node-context.js";
import type { Interrupt } from "../storage/checkpointer.js";
import type { ResolvedRunConfig } from "./run-config.js";
import type { RunDependencies } from "./run-dependencies.js";
import type { Progress } from "./run-progress.js";
import type { RunWatch } from "./run-watch.js";
import type { StepLedger } from "./step-ledger.js";

/**
 * What one step produced: the node's update (as returned, made an update), the state with it
 * applied, and where to go next.
 */
export type StepOutcome<S extends BaseState> =
  | { kind: "updated"; node: string; update: StateUpdate<S>; state: S; next: string | null }
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
}

/**
 * Runs the current node, then its router, as one cancellable task under the node's deadline, on
 * a copy of the state: a node that fails, times out, is stopped or pauses leaves the run's
 * state untouched, and events it sends after that are dropped.
 */
export async function runStep<S extends BaseState>(
  deps: RunDependencies<S>,
  args: StepArgs<S>,
): Promise<StepOutcome<S>> {
  const { progress, config } = args;
  const name = progress.currentNode!;
  const node = requireNode(deps, name, config.threadId);
  args.emit({ type: "node_start", node: name, step: progress.step });
  let live = true;
  const emit: EmitRunEvent = (event) => {
    if (live) args.emit(event);
  };
  const deadlineAt = config.nodeTimeoutMs === null ? null : Date.now() + config.nodeTimeoutMs;
  try {
    return await runWithDeadline(
      (scope) =>
        withInterruptScope(
          { idBase: `${name}:${progress.step}`, node: name, answers: progress.resumeAnswers },
          () => nodeThenRoute(deps, { ...args, emit }, node, name, { scope, deadlineAt }),
        ),
      {
        parent: args.signal,
        timeoutMs: config.nodeTimeoutMs,
        onTimeout: () => new NodeTimeoutError("node", name, (config.nodeTimeoutMs ?? 0) / 1000),
        manyChildren: true,
      },
    );
  } catch (error) {
    if (isInterruptSignal(error)) return { kind: "interrupted", interrupts: error.interrupts };
    if (isTenxgraphError(error, "NODE_TIMEOUT_001")) {
      deps.metrics.nodeTimeouts.add(1, { node: name });
    }
    throw error;
  } finally {
    live = false;
  }
}

async function nodeThenRoute<S extends BaseState>(
  deps: RunDependencies<S>,
  args: StepArgs<S>,
  node: NodeLike<S>,
  name: string,
  limits: NodeLimits,
): Promise<StepOutcome<S>> {
  const { progress } = args;
  const working = copyForNode(progress.state);
  const output = await callNode(node, working, nodeContext(deps, args, name, limits));
  requireAppendOnly(progress.state.messages, working.messages, name);
  // The persisted ids are the transcript's ids unless the node pushed messages itself or earlier
  // steps were not durable; then the whole transcript is checked.
  const knownIds =
    working.messages.length === progress.persisted ? progress.persistedIds : undefined;
  // `working` is this step's own copy of the state, made above.
  const update = toUpdate(output, name);
  applyUpdate(working, update, deps.graph.reducers, { knownIds, owned: true });
  requireSchema(deps, working, name);
  requireStorable(working, progress.state.messages, name);
  const next = await route(deps, name, working);
  return { kind: "updated", node: name, update, state: working, next: next === END ? null : next };
}

/** The transcript only grows: a node that edited or dropped earlier messages of its copy is refused. */
function requireAppendOnly(before: readonly Message[], after: readonly Message[], node: string) {
  const kept = after.length >= before.length && before.every((message, i) => after[i] === message);
  if (kept) return;
  throw new NodeOutputError(
    node,
    `changed earlier messages of its state in place; the transcript is ` +
      `append-only (trim a copy for the model, and return new messages as an update)`,
  );
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

/**
 * The state after the node (its update, and whatever it changed in its copy) must be JSON the
 * store keeps exactly: checked here, before the step's write, so every store refuses the same
 * values in the same words, naming the node and the field, and the thread keeps its last step.
 */
function requireStorable<S extends BaseState>(
  state: S,
  before: readonly Message[],
  node: string,
): void {
  const { messages, ...values } = state;
  // Messages the step did not add or replace were checked when they came in.
  const problem =
    findNonJson(values, "state.values") ??
    messages.reduce<string | null>(
      (found, message, i) =>
        found ?? (message === before[i] ? null : findNonJson(message, `messages[${i}]`)),
      null,
    );
  if (problem) throw new NodeOutputError(node, `left a value that cannot be stored: ${problem}`);
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
  node: string,
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
  };
  // Out of the node's reach: only ToolNode gets the runtime, and through it the ledger.
  return withRuntime(ctx, {
    checkpointer: deps.checkpointer,
    metrics: deps.metrics,
    ids: deps.ids,
    toolTimeoutMs: args.config.toolTimeoutMs,
    resumeAnswers: args.progress.resumeAnswers,
    watch: args.watch,
    stepLedger: args.stepLedger,
    claimStaleAfterMs: deps.claimStaleAfterMs,
    isEndedLocalRun: deps.isEndedLocalRun,
    faultPoints: deps.faultPoints,
    remoteTools: args.config.remoteTools,
    reducers: deps.graph.reducers as Record<string, Reducer<unknown> | undefined>,
  });
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

function toUpdate<S extends BaseState>(output: NodeOutput<S>, node: string): StateUpdate<S> {
  if (output === undefined || output === null) return {};
  let update: StateUpdate<S>;
  if (Array.isArray(output)) update = { messages: output } as StateUpdate<S>;
  else if (isMessageLike(output)) update = { messages: [output] } as StateUpdate<S>;
  else if (typeof output === "object") update = output as StateUpdate<S>;
  else {
    throw new NodeOutputError(
      node,
      `returned ${typeof output}: return a state update, a message, messages, or nothing`,
    );
  }
  requireValidMessages(update.messages, node);
  return update;
}

/** Messages are checked before they reach the store, where a bad one would spoil the thread. */
function requireValidMessages(messages: unknown, node: string): void {
  if (messages === undefined) return;
  if (!Array.isArray(messages)) {
    throw new NodeOutputError(node, `returned messages that are not an array of messages`);
  }
  messages.forEach((message, index) => {
    const parsed = messageSchema.safeParse(message);
    if (parsed.success) return;
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at '${issue.path.join(".")}'` : "";
    throw new NodeOutputError(
      node,
      `returned an invalid message [${index}]${where}: ${issue?.message ?? "not a message"}`,
    );
  });
}

function isMessageLike(value: unknown): value is Message {
  const v = value as Partial<Message> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.id === "string" &&
    typeof v.role === "string" &&
    typeof v.createdAt === "string" &&
    "content" in v
  );
}

/** The node after `from` for `state`, by its edge (`END` at the end). */
export async function route<S extends BaseState>(
  deps: RunDependencies<S>,
  from: string,
  state: S,
): Promise<string> {
  const edge = deps.graph.edges.get(from) as Edge<S>;
  if (edge.kind === "direct") return edge.to;
  const choice = await edge.router(state);
  const target = edge.pathMap ? edge.pathMap[choice] : choice;
  if (target === undefined || (target !== END && !deps.graph.nodes.has(target))) {
    const allowed = edge.pathMap ? Object.keys(edge.pathMap) : [...deps.graph.nodes.keys(), "END"];
    throw new GraphValidationError(
      "GRAPH_006",
      `The conditional edge from '${from}' returned '${String(choice)}', which is not one of: ${allowed.join(", ")}`,
    );
  }
  return target;
}
