/** One request as a {@link Sender} puts it on the wire: URL, headers and JSON text all built. */
export interface WireRequest {
  url: string;
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal | undefined;
}

/**
 * An answer's status and headers, and its body, read once: whole as text, or as byte chunks
 * while they arrive. An abort of the request's signal while the body is read rejects with the
 * signal's reason.
 */
export interface WireResponse {
  status: number;
  statusText: string;
  /** A header's value (name in lower case), `null` when absent. */
  header(name: string): string | null;
  text(): Promise<string>;
  /** The body as it arrives; leaving the loop early closes the connection under it. */
  chunks(): AsyncIterable<Uint8Array>;
}

/**
 * Sends one request and resolves once the status and headers are in. It rejects when no answer
 * came (refused, reset, DNS) or the signal was aborted; the transport maps those.
 */
export type Sender = (request: WireRequest) => Promise<WireResponse>;
