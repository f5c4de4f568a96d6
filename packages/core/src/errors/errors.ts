import { TenxgraphError } from "./tenxgraph-error.js";
import type { ErrorCode } from "./codes.js";

/** Another execution committed to this thread after this run read it; nothing was overwritten. */
export class StaleStateError extends TenxgraphError {
  constructor(
    readonly threadId: string,
    readonly expectedVersion: number,
    readonly actualVersion: number | null,
  ) {
    super(
      "STORAGE_CONFLICT_001",
      `State of thread '${threadId}' was modified by another execution ` +
        `(expected version ${expectedVersion}, found ${actualVersion ?? "none"})`,
    );
  }
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

/** A resume, input or thread lookup that cannot be carried out as asked. */
export class InvalidRunError extends TenxgraphError {
  constructor(
    code: Extract<ErrorCode, `RESUME_${string}` | `THREAD_${string}` | "INPUT_001">,
    message: string,
  ) {
    super(code, message);
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
