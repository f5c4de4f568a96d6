/**
 * Every error code tenxgraph publishes, listed once. A published code never changes meaning;
 * new failures get new codes.
 */
export const ERROR_CODES = {
  /** Another execution committed to the thread after this run read it. */
  STORAGE_CONFLICT_001: "STORAGE_CONFLICT_001",
  /** A checkpointer could not read or write (engine failure, closed store). */
  STORAGE_FAILURE_001: "STORAGE_FAILURE_001",
  /**
   * A write named a user other than the thread's owner. The write that creates a thread sets its
   * owner (its `userId`, or none), and no later write changes it: a write with another `userId`
   * is refused and nothing of it is written. A write with no `userId` keeps the owner.
   */
  STORAGE_OWNER_001: "STORAGE_OWNER_001",
  /** The store's schema is newer than this code: upgrade tenxgraph; nothing was changed. */
  STORAGE_SCHEMA_001: "STORAGE_SCHEMA_001",
  /** The store is not a tenxgraph store (not a database, corrupt, or another program's tables). */
  STORAGE_SCHEMA_002: "STORAGE_SCHEMA_002",
  /**
   * A node or tool used `ctx.store`, but the graph was compiled without a store: pass one,
   * `compile({ store: new InMemoryStore() })` (`@tenxgraph/core/store`), `SqliteStore` or
   * `PgStore`. Nothing was read or written.
   */
  STORE_001: "STORE_001",
  /**
   * A store call was refused for its arguments: an empty namespace or label, a label with a
   * `.`, a namespace starting with `langgraph` (reserved), an empty key, a value that is not a
   * JSON object, a `query` on a store without `index`, or a bad `limit`. Nothing was written.
   */
  STORE_002: "STORE_002",
  /**
   * The store's embedding function or model failed, or answered with the wrong number of
   * vectors or vectors not of the index's `dims`; its error is the `cause`. Nothing was written.
   */
  STORE_003: "STORE_003",
  /** A node ran past its deadline. */
  NODE_TIMEOUT_001: "NODE_TIMEOUT_001",
  /** A tool call ran past its deadline. */
  NODE_TIMEOUT_002: "NODE_TIMEOUT_002",
  /** The run took more steps than `recursionLimit`. */
  RECURSION_001: "RECURSION_001",
  /** An edge names a node that does not exist. */
  GRAPH_001: "GRAPH_001",
  /** The graph has no entry point, or `addEdge(START, …)` names a second one. */
  GRAPH_002: "GRAPH_002",
  /** A node name is used twice, or is reserved. */
  GRAPH_003: "GRAPH_003",
  /** A node has no outgoing edge. */
  GRAPH_004: "GRAPH_004",
  /**
   * A node has two sets of conditional edges. (Before fan-out, also a fixed edge beside
   * conditional edges, or two fixed edges; those now run their targets in parallel.)
   */
  GRAPH_005: "GRAPH_005",
  /**
   * A conditional edge, a `Command`'s `goto` or a `Send` named a node that is not in its path
   * map or graph.
   */
  GRAPH_006: "GRAPH_006",
  /** A join (`addEdge([a, b], c)`) has no source, leads to END, or its target has another join. */
  GRAPH_007: "GRAPH_007",
  /**
   * `compile({ version, migrations })` is malformed: a migration with no `from`, two from one
   * version, a rename to a node or tool the graph does not have, a former name the graph still
   * uses, one former tool name renamed to two tools, or a `state` that is not a function.
   */
  GRAPH_008: "GRAPH_008",
  /** A breakpoint (`interruptBefore`, `interruptAfter`) names a node the graph does not have. */
  GRAPH_009: "GRAPH_009",
  /** A node returned `new Command({ graph: Command.PARENT })` in a graph that is not a subgraph. */
  GRAPH_010: "GRAPH_010",
  /**
   * A handoff (`new Command({ graph: Command.PARENT, goto })` inside a subgraph) names a node the
   * parent graph does not have, or goes nowhere.
   */
  GRAPH_011: "GRAPH_011",
  /** A tool threw. */
  TOOL_ERROR_001: "TOOL_ERROR_001",
  /** A tool call's arguments are not JSON or fail the tool's schema. */
  TOOL_ARGS_001: "TOOL_ARGS_001",
  /** The model asked for a tool the node does not have. */
  TOOL_NOT_FOUND_001: "TOOL_NOT_FOUND_001",
  /** A call was started before but never recorded, and its policy is `"fail"`. */
  TOOL_IN_DOUBT_001: "TOOL_IN_DOUBT_001",
  /** Another live execution holds the claim on this call and did not finish in time. */
  TOOL_CONFLICT_001: "TOOL_CONFLICT_001",
  /**
   * This execution's claim on a call was taken over by another after its lease expired (its
   * heartbeats stopped, e.g. a paused process): the call's signal is aborted and nothing this
   * attempt does is recorded.
   */
  TOOL_CONFLICT_002: "TOOL_CONFLICT_002",
  /**
   * A tool returned a `Command` the runtime cannot apply: one with `goto` or `resume`, or whose
   * `update.messages` is not exactly one tool message answering the call. Recorded as the
   * call's failure (the tool ran; it is not run again).
   */
  TOOL_COMMAND_001: "TOOL_COMMAND_001",
  /**
   * The ledger holds this very call (same assistant message id and call id) recorded with other
   * arguments: the message was edited in place after the call ran. The recorded result is not
   * replayed (it answers the old arguments) and the edited call is not run (its record would
   * overwrite one of a side effect that happened); the call is answered with this error. Give
   * the edited call a new call id (or the message a new id) to run it.
   */
  TOOL_CONFLICT_003: "TOOL_CONFLICT_003",
  /** `{ resume }` without `interruptId` while several interrupts are pending. */
  RESUME_001: "RESUME_001",
  /** `interruptId` names no pending interrupt. */
  RESUME_002: "RESUME_002",
  /** `{ resume }` on a thread that is not interrupted. */
  RESUME_003: "RESUME_003",
  /** The answer to an in-doubt interrupt is not a valid decision. */
  RESUME_004: "RESUME_004",
  /**
   * `ctx.sleep(ms)` got a duration that is not a finite number of milliseconds at least 0 (a
   * negative number, `NaN`, `Infinity`, a string). The node fails; nothing is paused.
   */
  TIMER_001: "TIMER_001",
  /**
   * `interrupt(value, { resumeAt })` got a `resumeAt` that is not a valid date (a `Date` or an
   * ISO 8601 string). The node fails; nothing is paused.
   */
  TIMER_002: "TIMER_002",
  /** `invoke(null)` on a thread that does not exist. */
  THREAD_001: "THREAD_001",
  /** New input on a thread that waits for an interrupt answer. */
  THREAD_002: "THREAD_002",
  /** New input while the model's last tool calls are unanswered (continue the run first). */
  THREAD_003: "THREAD_003",
  /**
   * A run started with `durableCheckpointEveryStep: false` is live on the thread (its lease has
   * a fresh heartbeat): another run now would repeat its model and tool calls. Nothing was
   * written, unless the refused run had just created the thread (the message then says its
   * input is in the thread, carried on by the live run).
   */
  THREAD_004: "THREAD_004",
  /**
   * The thread has no such version to read, fork or continue from: it was never written, or
   * was pruned (`pruneHistory`, the store's `keepVersions`).
   */
  THREAD_005: "THREAD_005",
  /**
   * A subgraph found a thread at its child's id (`<parent>|<node>@<step>`) that its parent did
   * not create: not recorded with this parent as its `parentThreadId`, or owned by another user.
   * The subgraph does not adopt it (its messages are not the child's reply); nothing was written.
   */
  THREAD_006: "THREAD_006",
  /**
   * The thread was written by another version of the graph (`compile({ version })` or its
   * shape), and this graph cannot continue it: its next node, a frontier task's node, or the
   * tool of a pending call is missing, a pending call's recorded arguments no longer parse, or
   * its migration's `state` failed. The message names each thing missing. Nothing was written:
   * the thread is as it was, for a graph that can continue it (or a migration that carries it).
   */
  THREAD_007: "THREAD_007",
  /**
   * `copyThread` refused to copy the thread, and wrote nothing: the thread does not exist, the
   * copy's id is taken, the thread is a subgraph's (copy its parent) or has subgraph threads of
   * its own, a run is on it (`running`), or a tool call of its ledger is in doubt (started, its
   * outcome unknown: decide it first). The message names which.
   */
  THREAD_008: "THREAD_008",
  /**
   * The run was abandoned through the host control `abandonSignal`: its owner lost it to another
   * execution (a worker whose lease was taken over), so it stopped where it was and wrote
   * nothing more. The execution that took it over carries the thread on.
   */
  RUN_ABANDONED_001: "RUN_ABANDONED_001",
  /**
   * The input or config passed to `invoke`/`stream` is malformed: the message names the field
   * (`input.messages[2]`, `input.amount: BigInt is not JSON`, `config.threadId`), or the state
   * with the input applied does not match the graph's zod schema (`total: Invalid input: expected
   * number, received string`). Nothing was written.
   */
  INPUT_001: "INPUT_001",
  /**
   * A node returned (or left in its state) something that cannot be stored: a value that is
   * not JSON (`state.values.amount: BigInt is not JSON`), an invalid message, an edited
   * transcript, or a state that does not match the graph's zod schema. The step was not written;
   * the thread is left failed at the node.
   */
  NODE_OUTPUT_001: "NODE_OUTPUT_001",
  /**
   * An option that is not known was passed to `compile()`, `invoke()`/`stream()` (their
   * config), `createReactAgent()` or `new Agent()`: a LangGraph.js name (`configurable`,
   * `interruptBefore`, `prompt`), a typo, or another function's option. The message names it,
   * says what to use instead, and lists the known options. Nothing was built or run.
   */
  OPTION_001: "OPTION_001",
  /**
   * A checkpointer option is invalid (a malformed Redis URL, say); nothing was opened. Thrown
   * by the constructor as a `TypeError` that carries this code.
   */
  CONFIG_001: "CONFIG_001",
  /**
   * A background run was refused: its thread already has an active run and the run's
   * `multitask_strategy` is `reject` (the server answers 409 `THREAD_BUSY`). Nothing was queued.
   */
  RUNS_001: "RUNS_001",
  /** A background run was asked to change (cancelled) after it had ended (409 `RUN_ENDED`). */
  RUNS_002: "RUNS_002",
  /**
   * A model request failed in a way retrying cannot fix: the provider refused it (a 4xx other
   * than 408, 409 and 429; its message is quoted) or it failed with an unknown error.
   */
  MODEL_001: "MODEL_001",
  /** A model request ran past the model node's `requestTimeout`. */
  MODEL_002: "MODEL_002",
  /** A model cannot be used: unknown provider, provider package not installed, or missing settings. */
  MODEL_003: "MODEL_003",
  /** The provider answered with a body that is not a valid response (malformed JSON or stream). */
  MODEL_004: "MODEL_004",
  /** The provider kept failing with transient errors (429, 5xx, network) until the retries ran out. */
  MODEL_005: "MODEL_005",
  /**
   * The model's structured response (an agent's `responseFormat`) is not JSON, or not what the
   * schema accepts; the message names the first problems and quotes the reply. The node fails
   * with it: `structuredResponse` is never set to a value the schema refuses.
   */
  MODEL_006: "MODEL_006",
  /**
   * A task (`task()` from `@tenxgraph/core/func`) was called outside a running entrypoint, or
   * inside another task (a task's result is recorded, so the tasks it calls would not run again
   * on a replay, and the call order of the tasks after it would shift). Nothing was run.
   */
  FUNC_001: "FUNC_001",
  /**
   * `task()` or `entrypoint()` was given a bad definition: a name that is not 1-64 letters,
   * digits, `_` or `-`, a function that is not a function, or a bad `timeout` or `onInDoubt`;
   * or a task was called with an input that is not JSON (the ledger keys its record by it).
   * Nothing was run.
   */
  FUNC_002: "FUNC_002",
  /**
   * A task failed, and its failure is recorded in the ledger: it threw (or returned a value that
   * is not JSON), ran past its deadline, or was in doubt under `onInDoubt: "fail"`. The message
   * quotes the recorded code (`TOOL_ERROR_001`, `NODE_TIMEOUT_002`, `TOOL_IN_DOUBT_001`); a
   * replay of the entrypoint gets the same error without running the task.
   */
  FUNC_003: "FUNC_003",
  /**
   * The entrypoint called its n-th task with another input than the one recorded for that call:
   * the entrypoint is not deterministic (it branched on time, randomness or an outside read not
   * made in a task). The recorded result is not replayed and the task is not run again.
   */
  FUNC_004: "FUNC_004",
} as const;

/** One of the published error codes. */
export type ErrorCode = keyof typeof ERROR_CODES;
