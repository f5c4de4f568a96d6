import { TenxgraphError } from "./tenxgraph-error.js";
import type { ErrorCode } from "./codes.js";

/**
 * What a run had committed when another execution's write made it stale. Its writes stand:
 * nothing is rolled back, and the thread goes on from them.
 */
export interface CommittedProgress {
  runId: string;
  /** Versions this run committed, oldest first. Empty: nothing of it is in the store. */
  versions: number[];
  /** Whether its input (new messages and fields, or a resume answer) is among them. */
  inputCommitted: boolean;
  /** Ids of the messages it committed, its input's first. */
  messageIds: string[];
}

/**
 * Another execution committed to this thread after this run read it; nothing was overwritten.
 * From a run, `committed` says what the run had committed before: with no versions, retrying
 * is safe; otherwise its input is in the thread and must not be sent again as a new message
 * (invoking with the same input object again continues the thread instead).
 */
export class StaleStateError extends TenxgraphError {
  readonly committed: CommittedProgress | null;

  constructor(
    readonly threadId: string,
    readonly expectedVersion: number,
    readonly actualVersion: number | null,
    committed: CommittedProgress | null = null,
  ) {
    super(
      "STORAGE_CONFLICT_001",
      `State of thread '${threadId}' was modified by another execution ` +
        `(expected version ${expectedVersion}, found ${actualVersion ?? "none"})` +
        committedText(committed),
    );
    this.committed = committed;
  }
}

function committedText(committed: CommittedProgress | null): string {
  if (committed === null) return "";
  const { runId, versions, inputCommitted } = committed;
  if (versions.length === 0) {
    return `. Nothing of run ${runId} was committed: retrying it is safe`;
  }
  const what = inputCommitted ? "its input and " : "";
  return (
    `. Run ${runId} had committed ${what}${versions.length} write(s) (versions ` +
    `${versions.join(", ")}), which stand: do not send its input again as a new message. ` +
    `Read the thread with getState, or continue it with invoke(null, { threadId }) ` +
    `(invoking again with the same input object continues it too)`
  );
}

/** A checkpointer failed to read or write; the engine error is the `cause`. */
export class StorageError extends TenxgraphError {
  constructor(
    readonly operation: string,
    cause: unknown,
  ) {
    super("STORAGE_FAILURE_001", `Storage operation '${operation}' failed: ${errorText(cause)}`, {
      cause,
    });
  }
}

/**
 * A write named a user other than the thread's owner (`STORAGE_OWNER_001`): the write that
 * created the thread set its owner, and no write changes it, so a run of another user cannot
 * write into the thread. Nothing of the write was applied. The message does not name the owner,
 * since it may reach the user who was refused.
 */
export class ThreadOwnerError extends TenxgraphError {
  constructor(
    readonly threadId: string,
    readonly userId: string,
  ) {
    super(
      "STORAGE_OWNER_001",
      `Thread '${threadId}' belongs to another user: a write as user '${userId}' cannot change ` +
        `its owner, and nothing of it was written`,
    );
  }
}

/**
 * A store refused to open because using it could lose data: its schema is newer than this code
 * (`STORAGE_SCHEMA_001`), or it is not a tenxgraph store at all (`STORAGE_SCHEMA_002`). Nothing in
 * it was changed; `location` names the file or database.
 */
export class StorageSchemaError extends TenxgraphError {
  constructor(
    code: "STORAGE_SCHEMA_001" | "STORAGE_SCHEMA_002",
    readonly location: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(code, `Cannot use '${location}' as a tenxgraph store: ${detail}`, options);
  }
}

/** A node (`NODE_TIMEOUT_001`) or a tool call (`NODE_TIMEOUT_002`) ran past its deadline. */
export class NodeTimeoutError extends TenxgraphError {
  constructor(
    readonly scope: "node" | "tool",
    /** The node or tool that timed out. */
    readonly target: string,
    readonly timeoutSeconds: number,
  ) {
    super(
      scope === "node" ? "NODE_TIMEOUT_001" : "NODE_TIMEOUT_002",
      `${scope === "node" ? "Node" : "Tool"} '${target}' timed out after ${timeoutSeconds} s`,
    );
  }
}

/** The run took more steps than its `recursionLimit`. */
export class GraphRecursionError extends TenxgraphError {
  constructor(
    readonly threadId: string,
    readonly recursionLimit: number,
  ) {
    super(
      "RECURSION_001",
      `Run on thread '${threadId}' reached the recursion limit of ${recursionLimit} steps ` +
        `without reaching END (raise recursionLimit if the graph really needs more steps)`,
    );
  }
}

/** The graph is malformed; raised by `compile()` and by routing at run time. */
export class GraphValidationError extends TenxgraphError {
  constructor(code: Extract<ErrorCode, `GRAPH_${string}`>, message: string) {
    super(code, message);
  }
}

/** A tool failed; the run does not reject with it: it becomes a tool message with `isError`. */
export class ToolError extends TenxgraphError {
  constructor(
    code: Extract<ErrorCode, `TOOL_${string}` | "NODE_TIMEOUT_002">,
    readonly toolName: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/**
 * The reason a call's signal aborts when a heartbeat finds its claim taken over: its lease
 * expired and another execution claimed the call at a later attempt. This attempt is a zombie:
 * the runtime stops waiting for it and records nothing it does (its writes are fenced).
 */
export class ClaimLostError extends TenxgraphError {
  constructor(
    readonly threadId: string,
    readonly key: string,
    readonly attempt: number,
  ) {
    super(
      "TOOL_CONFLICT_002",
      `The claim of attempt ${attempt} on call '${key}' (thread '${threadId}') was taken over by ` +
        `another execution after its lease expired: this attempt is aborted and nothing it does ` +
        `is recorded`,
    );
  }
}

/**
 * A run ended through the host control `abandonSignal` (`RUN_ABANDONED_001`): it wrote nothing after the
 * signal, not even a stopped or failed status, since another execution owns the thread now.
 */
export class RunAbandonedError extends TenxgraphError {
  constructor(
    readonly threadId: string,
    readonly reason: string,
  ) {
    super(
      "RUN_ABANDONED_001",
      `The run on thread '${threadId}' was abandoned (${reason}): it stopped without writing, ` +
        `and the execution that took the thread over carries it on`,
    );
  }
}

/** A resume, input, timer or thread lookup that cannot be carried out as asked. */
export class InvalidRunError extends TenxgraphError {
  constructor(
    code: Extract<
      ErrorCode,
      `RESUME_${string}` | `THREAD_${string}` | `TIMER_${string}` | "INPUT_001"
    >,
    message: string,
  ) {
    super(code, message);
  }
}

/**
 * A node's output cannot be stored (`NODE_OUTPUT_001`): `detail` names the field, as in
 * `state.values.amount: BigInt is not JSON`. Raised before the step is written.
 */
export class NodeOutputError extends TenxgraphError {
  constructor(
    readonly node: string,
    detail: string,
  ) {
    super("NODE_OUTPUT_001", `Node '${node}' ${detail}`);
  }
}

/**
 * A model node could not get a reply: the request failed for good (`MODEL_001`), the
 * request ran past its timeout (`MODEL_002`), the model cannot be used as configured
 * (`MODEL_003`), the response was malformed (`MODEL_004`), or transient failures outlasted the
 * retries (`MODEL_005`). `model` names the model (`"openai/gpt-4o-mini"`); `statusCode` is the
 * provider's HTTP status when there was one; the provider's error is the `cause`.
 */
export class ModelError extends TenxgraphError {
  readonly statusCode: number | null;
  /** Requests made, retries included (0 when none could be made). */
  readonly attempts: number;

  constructor(
    code: Extract<ErrorCode, `MODEL_${string}`>,
    readonly model: string,
    message: string,
    options: { cause?: unknown; statusCode?: number | null; attempts?: number } = {},
  ) {
    super(code, `Model '${model}': ${message}`, { cause: options.cause });
    this.statusCode = options.statusCode ?? null;
    this.attempts = options.attempts ?? 0;
  }
}

/** The message of an error, or the thrown value as text. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
