import { defaultSender } from "#default-sender";
import { ConnectionError, errorClassFor, type ErrorDetail } from "./client-error.js";
import { fetchSender } from "./fetch-sender.js";
import type { Sender, WireResponse } from "./sender.js";

/** A bearer token, or a function that returns the current one (called before every request). */
export type TokenSource =
  string | (() => string | null | undefined | Promise<string | null | undefined>);

/** Settings of {@link HttpTransport}, as `TenxgraphClient` takes them. */
export interface TransportOptions {
  baseUrl: string;
  token?: TokenSource;
  headers?: Record<string, string>;
  /** Send through this fetch. Without it: `node:http` in Node.js, the global fetch elsewhere. */
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
 * of the status). Requests go through a {@link Sender}: keep-alive `node:http` in Node.js, fetch
 * in browsers or when the caller gives one; both behave the same.
 */
export class HttpTransport {
  readonly #base: string;
  readonly #token: TokenSource | undefined;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #sender: Sender;

  constructor(options: TransportOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#headers = Object.freeze({ ...options.headers });
    this.#sender = options.fetch ? fetchSender(options.fetch) : defaultSender();
  }

  /** The `data` of a JSON answer. */
  async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec);
    const body = JSON.parse(await response.text()) as { data: T };
    return body.data;
  }

  /** A JSON answer as it is (routes outside the envelope, like `/openapi.json`). */
  async raw<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec);
    return JSON.parse(await response.text()) as T;
  }

  /** The response of a successful request (2xx); any other status is thrown as its error. */
  async send(spec: RequestSpec): Promise<WireResponse> {
    const headers: Record<string, string> = {
      accept: spec.accept ?? "application/json",
      ...this.#headers,
    };
    // Only requests with a body say JSON: a GET without auth then needs no CORS preflight.
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    const token = typeof this.#token === "function" ? await this.#token() : this.#token;
    if (token) headers.authorization = `Bearer ${token}`;
    let response: WireResponse;
    try {
      response = await this.#sender({
        url: this.#base + spec.path,
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: spec.signal,
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
    if (response.status < 200 || response.status > 299) throw await errorOf(response);
    return response;
  }
}

/** The error envelope, unchecked: any field may be missing or of another type. */
interface ErrorBody {
  error?: { code?: unknown; message?: unknown; details?: unknown };
  metadata?: { request_id?: unknown };
}

/** The error an unsuccessful response stands for; a body that is not the envelope still gives one. */
async function errorOf(response: WireResponse): Promise<Error> {
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
      : response.header("x-request-id");
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
