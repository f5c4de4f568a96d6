import { context, type Context } from "@opentelemetry/api";
import { InvalidRunError } from "../errors/errors.js";
import {
  LANGGRAPH_OPTION_HINTS,
  requireKnownOptions,
  type OptionHints,
} from "../errors/unknown-option.js";
import { withFields, type Logger } from "../events/logger.js";
import { MAX_ID_LENGTH } from "../storage/json-check.js";
import type { IdGenerator } from "../messages/ids.js";
import { checkRemoteToolSpec, type RemoteToolSpec } from "../node/remote-tool-spec.js";
import type { CheckpointRead } from "../storage/checkpointer.js";
import { NO_HOST_CONTROLS, type HostControls } from "./host-controls.js";
import { NO_BREAKPOINTS, type BreakpointOptions, type Breakpoints } from "./breakpoints.js";

/**
 * Per-run options of `invoke` and `stream`. All optional. `interruptBefore` / `interruptAfter`
 * replace the graph's own breakpoints (`compile()`'s) for this run.
 */
export interface RunConfig extends BreakpointOptions {
  /**
   * The conversation to run on. A random one is generated, with a warning, when absent. At most
   * {@link MAX_ID_LENGTH} (256) characters, like `userId`.
   */
  threadId?: string;
  userId?: string;
  /** Seconds a node may run, tools included (default 900). `null`, 0 or negative disables. */
  nodeTimeout?: number | null;
  /** Seconds one tool call may run (default 300); a tool's own `timeout` wins. */
  toolTimeout?: number | null;
  /** Steps one run may take before `GraphRecursionError` (default 25). */
  recursionLimit?: number;
  /**
   * Write state durably after every step (default `true`). With `false` only terminal points
   * (completed, interrupted, stopped, failed) are written: fewer writes, but a crash replays
   * the run from its last terminal point, and a replayed model node asks for new tool calls.
   * Such a run holds the thread's run lease: while it is live, another run on the thread is
   * refused with `THREAD_004` (its steps are not in the store to continue from).
   */
  durableCheckpointEveryStep?: boolean;
  /** Aborting it stops the run like `stop()`. */
  signal?: AbortSignal;
  /**
   * Tools the caller runs, for this run only: every `ToolNode` can call them, and a call pauses
   * the run for the caller's result (see `remoteTool`). A node's own tool of the same name wins.
   */
  remoteTools?: RemoteToolSpec[];
  /**
   * Fork: run from this past version of the thread instead of its latest, as a new branch of
   * the same thread. The run's first write is the next version, made from this one (its
   * `parentVersion`); the versions after it stay readable in the history. With `null` input
   * the run continues from that version's node; with a state update it starts a new turn
   * there. Tool calls replay from the ledger only where the branch keeps the assistant message
   * that made them (see the README, "History and forks").
   */
  fromVersion?: number;
}

/** Every key of {@link RunConfig}: the compiler checks the list against the interface. */
const RUN_CONFIG_KEYS = {
  threadId: true,
  userId: true,
  nodeTimeout: true,
  toolTimeout: true,
  recursionLimit: true,
  durableCheckpointEveryStep: true,
  signal: true,
  remoteTools: true,
  fromVersion: true,
  interruptBefore: true,
  interruptAfter: true,
} satisfies Record<keyof RunConfig, true>;
const INVOKE_OPTIONS: ReadonlySet<string> = new Set(Object.keys(RUN_CONFIG_KEYS));
const STREAM_OPTIONS: ReadonlySet<string> = new Set([...INVOKE_OPTIONS, "streamMode"]);

const HOST_CONTROL_HINT =
  "A host's control, not a run option: pass it to invokeAsHost() or streamAsHost() of '@tenxgraph/core/host'";

/** What to use instead of LangGraph.js's run options, and where the host controls went. */
const RUN_CONFIG_HINTS: OptionHints = {
  ...LANGGRAPH_OPTION_HINTS,
  configurable:
    "Use 'threadId' (configurable.thread_id) and 'userId' at the top of the config; pass other values through the state or a closure",
  thread_id: "Use 'threadId'",
  recursion_limit: "Use 'recursionLimit'",
  checkpoint_id: "Use 'fromVersion', a version from getStateHistory()",
  durability: "Use 'durableCheckpointEveryStep'",
  timeout: "Use 'nodeTimeout' (seconds a node may run) and 'toolTimeout' (one tool call)",
  context: "Pass values through the state, 'userId', or a closure",
  callbacks: "Read the run's events with stream(), or give compile() a logger",
  streamMode: "'streamMode' is an option of stream(); invoke() answers the run's result",
  subgraphs:
    "Use getState({ threadId, subgraphs: true }); a subgraph's stream events carry its namespace",
  drainSignal: HOST_CONTROL_HINT,
  abandonSignal: HOST_CONTROL_HINT,
  loadedThread: HOST_CONTROL_HINT,
  traceContext: HOST_CONTROL_HINT,
  graphId: HOST_CONTROL_HINT,
};

/** Above the model adapters' default request timeout (600 s), so a slow model fails with its own error. */
export const DEFAULT_NODE_TIMEOUT_SECONDS = 900;
/** Default deadline of one tool call. */
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 300;
/** Default number of steps one run may take. */
export const DEFAULT_RECURSION_LIMIT = 25;

/** A {@link RunConfig} and a host's controls, with every default applied and every value checked. */
export interface ResolvedRunConfig {
  threadId: string;
  userId: string | null;
  /** `null`: no deadline. */
  nodeTimeoutMs: number | null;
  toolTimeoutMs: number | null;
  recursionLimit: number;
  durableCheckpointEveryStep: boolean;
  signal: AbortSignal | undefined;
  drainSignal: AbortSignal | undefined;
  abandonSignal: AbortSignal | undefined;
  /** Checked and copied: `ToolNode` makes them into tools (see `remoteToolsOf`). */
  remoteTools: readonly RemoteToolSpec[];
  loadedThread: CheckpointRead | undefined;
  /** The context the run's span is a child of: the host's, else the caller's active one. */
  traceParent: Context;
  /** The host's id of the graph, for the run's span; `null` outside a host. */
  graphId: string | null;
  fromVersion: number | null;
  /**
   * The run's static breakpoints: its config's over the graph's, checked against its nodes by
   * the compiled graph (`NO_BREAKPOINTS` here, and in a subgraph's child run).
   */
  breakpoints: Breakpoints;
  /**
   * The thread whose subgraph node runs this one, set by that node (never by a caller): the
   * run's first write records it, so the child is listed under its parent and deleted with it.
   */
  parentThreadId: string | null;
}

/**
 * Applies defaults and checks every value; invalid timeouts and limits warn and fall back, and
 * a value that names the wrong thread or cannot work (an object `threadId`, a `signal` that is
 * no AbortSignal) is refused with `INPUT_001` before anything is read or written. A key that is
 * no option of `call` (`configurable`, `checkpoint_id`, a typo) is `OPTION_001`. A host's
 * `controls` come beside the config, never in it (`invokeAsHost`/`streamAsHost`).
 */
export function resolveRunConfig(
  config: RunConfig,
  logger: Logger,
  newId: IdGenerator,
  call: "invoke" | "stream" = "invoke",
  controls: HostControls = NO_HOST_CONTROLS,
): ResolvedRunConfig {
  if (typeof config !== "object" || config === null) {
    throw new InvalidRunError("INPUT_001", `config must be an object, got ${typeOf(config)}`);
  }
  const known = call === "stream" ? STREAM_OPTIONS : INVOKE_OPTIONS;
  requireKnownOptions(`${call}() config`, config, known, RUN_CONFIG_HINTS);
  if (config.threadId !== undefined) requireId(config.threadId, "config.threadId");
  if (config.userId !== undefined && config.userId !== null) {
    requireId(config.userId, "config.userId");
  }
  requireSignal(config.signal, "config.signal");
  requireSignal(controls.drainSignal, "controls.drainSignal");
  requireSignal(controls.abandonSignal, "controls.abandonSignal");
  let threadId = config.threadId;
  if (threadId === undefined || threadId === "") {
    threadId = newId();
    logger.warn(
      { threadId },
      "No threadId given: generated one. This run can be neither resumed nor stopped by id unless you keep it.",
    );
  }
  // Warnings about the config name the thread, like every other record of the run.
  const log = withFields(logger, { threadId });
  return {
    threadId,
    userId: config.userId ?? null,
    nodeTimeoutMs: resolveTimeout(
      config.nodeTimeout,
      "nodeTimeout",
      DEFAULT_NODE_TIMEOUT_SECONDS,
      log,
    ),
    toolTimeoutMs: resolveTimeout(
      config.toolTimeout,
      "toolTimeout",
      DEFAULT_TOOL_TIMEOUT_SECONDS,
      log,
    ),
    recursionLimit: resolveRecursionLimit(config.recursionLimit, log),
    durableCheckpointEveryStep: config.durableCheckpointEveryStep ?? true,
    signal: config.signal,
    drainSignal: controls.drainSignal,
    abandonSignal: controls.abandonSignal,
    remoteTools: resolveRemoteTools(config.remoteTools),
    loadedThread: resolveLoadedThread(controls.loadedThread, threadId),
    // Read now, while the caller's context is active: the run goes on after awaits.
    traceParent: controls.traceContext ?? context.active(),
    graphId: controls.graphId ?? null,
    fromVersion: resolveFromVersion(config.fromVersion),
    breakpoints: NO_BREAKPOINTS,
    parentThreadId: null,
  };
}

function resolveFromVersion(version: unknown): number | null {
  if (version === undefined || version === null) return null;
  if (typeof version === "number" && Number.isInteger(version) && version >= 1) return version;
  throw new InvalidRunError(
    "INPUT_001",
    `config.fromVersion must be a version of the thread (a whole number >= 1), got ${typeOf(version)} ${String(version)}`,
  );
}

function resolveLoadedThread(
  read: CheckpointRead | undefined,
  threadId: string,
): CheckpointRead | undefined {
  if (read === undefined) return read;
  const fits =
    typeof read === "object" &&
    read !== null &&
    (read.checkpoint === null || read.checkpoint?.threadId === threadId) &&
    Number.isInteger(read.stopRequests) &&
    read.stopRequests >= 0;
  if (fits) return read;
  throw new InvalidRunError(
    "INPUT_001",
    `controls.loadedThread must be what getCheckpointAndStops('${threadId}') answered, got ${typeOf(read)}`,
  );
}

function resolveRemoteTools(specs: unknown): readonly RemoteToolSpec[] {
  if (specs === undefined) return [];
  if (!Array.isArray(specs)) {
    throw new InvalidRunError(
      "INPUT_001",
      `config.remoteTools must be an array, got ${typeOf(specs)}`,
    );
  }
  const names = new Set<string>();
  for (const spec of specs as RemoteToolSpec[]) {
    try {
      checkRemoteToolSpec(spec);
    } catch (error) {
      throw new InvalidRunError("INPUT_001", `config.remoteTools: ${(error as Error).message}`);
    }
    if (names.has(spec.name)) {
      throw new InvalidRunError(
        "INPUT_001",
        `config.remoteTools: two tools are named '${spec.name}'`,
      );
    }
    names.add(spec.name);
  }
  // A copy: the caller may change its list while the run goes on.
  return Object.freeze((specs as RemoteToolSpec[]).map((spec) => ({ ...spec })));
}

/**
 * A thread or user id: a string of at most {@link MAX_ID_LENGTH} characters, on every store
 * alike (PostgreSQL could not index a much longer one).
 */
export function requireId(value: unknown, name: string): asserts value is string {
  if (typeof value !== "string") {
    throw new InvalidRunError("INPUT_001", `${name} must be a string, got ${typeOf(value)}`);
  }
  if (value.length > MAX_ID_LENGTH) {
    throw new InvalidRunError(
      "INPUT_001",
      `${name} is ${value.length} characters long; the limit is ${MAX_ID_LENGTH}`,
    );
  }
}

function requireSignal(signal: unknown, name: string): void {
  if (signal === undefined) return;
  const s = signal as Partial<AbortSignal> | null;
  if (typeof s?.aborted === "boolean" && typeof s.addEventListener === "function") return;
  throw new InvalidRunError(
    "INPUT_001",
    `${name} must be an AbortSignal (e.g. AbortSignal.timeout(ms)), got ${typeOf(signal)}`,
  );
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}

/**
 * Seconds to milliseconds. `null`, 0, a negative number or `Infinity` disable the deadline
 * (as they do for a tool's own timeout); anything else that is not a finite number logs a warning and falls back to the default, so a typo in a config file
 * never removes the protection silently.
 */
export function resolveTimeout(
  value: unknown,
  name: string,
  defaultSeconds: number,
  logger: Logger,
): number | null {
  if (value === undefined) return defaultSeconds * 1000;
  if (value === null || value === Infinity || (typeof value === "number" && value <= 0)) {
    return null;
  }
  if (typeof value !== "number" || !Number.isFinite(value)) {
    logger.warn(
      { setting: name, value: String(value), defaultSeconds },
      `Invalid ${name}: using the default`,
    );
    return defaultSeconds * 1000;
  }
  return value * 1000;
}

function resolveRecursionLimit(value: unknown, logger: Logger): number {
  if (value === undefined) return DEFAULT_RECURSION_LIMIT;
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  logger.warn(
    { setting: "recursionLimit", value: String(value), default: DEFAULT_RECURSION_LIMIT },
    "Invalid recursionLimit: using the default",
  );
  return DEFAULT_RECURSION_LIMIT;
}
