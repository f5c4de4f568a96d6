/** One entry of an error's `details` (where, what, which check), as the server sends it. */
export interface ErrorDetail {
  loc: string[];
  msg: string;
  type: string;
}

/**
 * Codes the server answers with. The list helps editors complete names; any other string may
 * come too (a newer server, a custom auth function), so the type stays open.
 */
export type ApiErrorCode =
  /** Another execution committed to the thread after this request read it (409): read again and retry. */
  | "STORAGE_CONFLICT_001"
  /** Another live execution holds the claim on a tool call (409). */
  | "TOOL_CONFLICT_001"
  /** New input on a thread that waits for an interrupt answer (409). */
  | "THREAD_002"
  /** New input while the model's last tool calls are unanswered: continue the run first (409). */
  | "THREAD_003"
  /** Continue on a thread that does not exist (404). */
  | "THREAD_001"
  /** Resume without `interruptId` while several interrupts are pending (422). */
  | "RESUME_001"
  /** `interruptId` names no pending interrupt (422). */
  | "RESUME_002"
  /** Resume on a thread that is not interrupted (422). */
  | "RESUME_003"
  /** The answer to an in-doubt call is not a valid decision (422). */
  | "RESUME_004"
  | "INPUT_001"
  | "VALIDATION_ERROR"
  | "INVALID_JSON"
  | "NOT_FOUND"
  | "PERMISSION_DENIED"
  | "VERSION_NOT_FOUND"
  | "THREAD_005"
  | "REQUEST_TOO_LARGE"
  /** No token was sent (401): give the client a `token`. */
  | "MISSING_TOKEN"
  | "INVALID_TOKEN"
  | "EXPIRED_TOKEN"
  | "RECURSION_001"
  | "NODE_TIMEOUT_001"
  | "STORAGE_FAILURE_001"
  | "INTERNAL_ERROR"
  /** Set by the client: the server could not be reached (status 0). */
  | "CONNECTION_FAILED"
  /** Set by the client: a stream line that is not JSON (status 200). */
  | "INVALID_STREAM"
  | (string & {});

/** What every client error carries. */
export interface ClientErrorInit {
  code: ApiErrorCode;
  status: number;
  message: string;
  requestId?: string | null;
  details?: ErrorDetail[];
  cause?: unknown;
}

/** Marks client errors so the guard works when two copies of this package are loaded. */
const BRAND = Symbol.for("tenxgraph.client.error");

/**
 * An error answered by the server (`status` and `code` from its error envelope) or met on the
 * way (`CONNECTION_FAILED`, status 0). Subclasses name the status; check with
 * {@link isClientError}, which compares the code rather than the class.
 */
export class TenxgraphClientError extends Error {
  readonly code: ApiErrorCode;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The server's request id (also in its logs), when it answered. */
  readonly requestId: string | null;
  readonly details: ErrorDetail[];
  readonly [BRAND] = true;

  constructor(init: ClientErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId ?? null;
    this.details = init.details ?? [];
  }
}

/** 400: the body is not JSON. */
export class BadRequestError extends TenxgraphClientError {}
/** 401: no token, or a malformed, badly signed or expired one. */
export class AuthenticationError extends TenxgraphClientError {}
/** 403: the thread belongs to another user, or the action is not allowed. */
export class PermissionDeniedError extends TenxgraphClientError {}
/** 404: no such thread, message, in-doubt call or route. */
export class NotFoundError extends TenxgraphClientError {}
/**
 * 409: the thread changed under the request. `STORAGE_CONFLICT_001` (another execution
 * committed first: read again and retry), `THREAD_002`/`THREAD_003` (answer or continue first).
 */
export class ConflictError extends TenxgraphClientError {
  /** True for a stale-state conflict: another execution committed first. */
  get isStaleState(): boolean {
    return this.code === "STORAGE_CONFLICT_001";
  }
}
/** 413: the request body is larger than the server accepts. */
export class PayloadTooLargeError extends TenxgraphClientError {}
/** 422: the request is well-formed JSON but not valid (`details` says where), or a resume is wrong. */
export class ValidationError extends TenxgraphClientError {}
/** 5xx: the server failed. */
export class ServerError extends TenxgraphClientError {}
/** Status 0: no answer (refused, reset, DNS). Aborts are not wrapped: they reject as `AbortError`. */
export class ConnectionError extends TenxgraphClientError {}

const BY_STATUS: Record<number, typeof TenxgraphClientError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: ValidationError,
};

/** The error class for an HTTP status. */
export function errorClassFor(status: number): typeof TenxgraphClientError {
  return BY_STATUS[status] ?? (status >= 500 ? ServerError : TenxgraphClientError);
}

/**
 * True when `error` is a client error, and has `code` when one is given.
 *
 * @example
 * try { await client.updateState(threadId, { plan: "b" }); }
 * catch (e) { if (isClientError(e, "STORAGE_CONFLICT_001")) retry(); else throw e; }
 */
export function isClientError(error: unknown, code?: ApiErrorCode): error is TenxgraphClientError {
  if (typeof error !== "object" || error === null) return false;
  if ((error as { [BRAND]?: unknown })[BRAND] !== true) return false;
  return code === undefined || (error as TenxgraphClientError).code === code;
}
