import type { HttpTransport } from "./http-transport.js";
import { ndjsonLines } from "./ndjson-lines.js";
import type { GraphInputBody } from "./run-body.js";
import type { StreamChunk } from "./stream-chunk.js";

/**
 * The chunks of one streamed run, read as they arrive. The request is sent when iteration
 * starts; an error before the stream begins (401, 403, 409, 422) is thrown by the first step.
 * Leaving the loop early (`break`, `return`, a throw) or aborting `signal` closes the connection,
 * and the server then stops the run cleanly (the thread is left `stopped`; continue it with
 * `continueRun`). A run that fails after the stream began ends with an `error` chunk.
 */
export class ChunkStream implements AsyncIterable<StreamChunk> {
  readonly #transport: HttpTransport;
  readonly #body: GraphInputBody;
  readonly #signal: AbortSignal | undefined;

  constructor(transport: HttpTransport, body: GraphInputBody, signal?: AbortSignal) {
    this.#transport = transport;
    this.#body = body;
    this.#signal = signal;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamChunk> {
    // Our own controller, so leaving the loop aborts the request even when the caller gave no signal.
    const controller = new AbortController();
    const outer = this.#signal;
    const forward = () => controller.abort(outer?.reason);
    if (outer?.aborted) forward();
    outer?.addEventListener("abort", forward, { once: true });
    try {
      const response = await this.#transport.send({
        method: "POST",
        path: "/v1/graph/stream",
        body: this.#body,
        accept: "application/x-ndjson, application/json",
        signal: controller.signal,
      });
      for await (const chunk of ndjsonLines(response.chunks())) yield chunk as StreamChunk;
    } catch (error) {
      if (outer?.aborted) throw outer.reason ?? error;
      throw error;
    } finally {
      outer?.removeEventListener("abort", forward);
      controller.abort();
    }
  }

  /** Every chunk of the run, once it has ended. */
  async toArray(): Promise<StreamChunk[]> {
    const chunks: StreamChunk[] = [];
    for await (const chunk of this) chunks.push(chunk);
    return chunks;
  }
}
