import { ConnectionError, errorClassFor, type ErrorDetail } from "./client-error.js";

/** A bearer token, or a function that returns the current one (called before every request). */
export type TokenSource =
  string | (() => string | null | undefined | Promise<string | null | undefined>);

/** Settings of {@link HttpTransport}, as `TenxgraphClient` takes them. */
export interface TransportOptions {
  baseUrl: string;
  token?: TokenSource;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/** One request: method, path (with query), JSON body, how the answer is read, abort. */
export interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
  accept?: string;
  signal?: AbortSignal | undefined;
}

/**
 * Sends requests and reads the server's envelope: `{ data, metadata }` on success, `{ error:
 * { code, message, details }, metadata: { request_id } }` on failure (thrown as the error class
 * of the status). fetch only, so it runs in Node.js and browsers alike.
 */
export class HttpTransport {
  readonly #base: string;
  readonly #token: TokenSource | undefined;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #fetch: typeof fetch;

  constructor(options: TransportOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#headers = Object.freeze({ ...options.headers });
    // Bound: a browser's fetch throws "Illegal invocation" when called as a method of another object.
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** The `data` of a JSON answer. */
  async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec);
    const body = (await response.json()) as { data: T };
    return body.data;
  }

  /** A JSON answer as it is (routes outside the envelope, like `/openapi.json`). */
  async raw<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec);
    return (await response.json()) as T;
  }

  /** The response of a successful request (2xx); any other status is thrown as its error. */
  async send(spec: RequestSpec): Promise<Response> {
    const headers: Record<string, string> = {
      accept: spec.accept ?? "application/json",
      ...this.#headers,
    };
    // Only requests with a body say JSON: a GET without auth then needs no CORS preflight.
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    const token = typeof this.#token === "function" ? await this.#token() : this.#token;
    if (token) headers.authorization = `Bearer ${token}`;
    let response: Response;
    try {
      response = await this.#fetch(this.#base + spec.path, {
        method: spec.method,
        headers,
        ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
        ...(spec.signal ? { signal: spec.signal } : {}),
      });
    } catch (error) {
      if (spec.signal?.aborted) throw spec.signal.reason ?? error;
      throw new ConnectionError({
        code: "CONNECTION_FAILED",
        status: 0,
        message: `${spec.method} ${spec.path}: no answer from ${this.#base}: ${(error as Error).message}`,
        cause: error,
      });
    }
    if (!response.ok) throw await errorOf(response);
    return response;
  }
}

/** The error envelope, unchecked: any field may be missing or of another type. */
interface ErrorBody {
  error?: { code?: unknown; message?: unknown; details?: unknown };
  metadata?: { request_id?: unknown };
}

/** The error an unsuccessful response stands for; a body that is not the envelope still gives one. */
async function errorOf(response: Response): Promise<Error> {
  const text = await response.text().catch(() => "");
  let body: ErrorBody | null = null;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    // A proxy's HTML page or a plain-text answer: the status decides.
  }
  const error = body?.error;
  const metadata = body?.metadata;
  const requestId =
    typeof metadata?.request_id === "string"
      ? metadata.request_id
      : response.headers.get("x-request-id");
  const ErrorClass = errorClassFor(response.status);
  return new ErrorClass({
    code: typeof error?.code === "string" ? error.code : `HTTP_${response.status}`,
    status: response.status,
    message:
      typeof error?.message === "string"
        ? error.message
        : `HTTP ${response.status} ${response.statusText}${text ? `: ${text.slice(0, 200)}` : ""}`,
    requestId,
    details: Array.isArray(error?.details) ? (error.details as ErrorDetail[]) : [],
  });
}

/** Per-request options: an `AbortSignal`. */
export interface CallOptions {
  signal?: AbortSignal;
}
