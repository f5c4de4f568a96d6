/** High-water marks of WebSocket sessions: frames waiting to run, output not yet sent. */
export interface SocketPeaks {
  queuedFrames: number;
  queuedBytes: number;
  bufferedBytes: number;
}

/** Frames one socket may have waiting behind the run in progress; one more closes it (1008). */
export const MAX_QUEUED_FRAMES = 8;
/**
 * Output one socket may have buffered, not yet taken by its client; past it the socket is
 * closed (1008) and its run stopped: a client that does not read cannot grow the server.
 */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * What one socket holds: frames waiting to run (bounded in count and in bytes, at most one
 * request body's worth) and, through `ws.bufferedAmount`, output not yet sent. Each change
 * raises the server's `peaks`, for monitoring.
 */
export class SocketBudget {
  #frames = 0;
  #bytes = 0;

  constructor(
    readonly maxQueuedBytes: number,
    readonly peaks: SocketPeaks,
  ) {}

  /** Takes a frame into the queue, or `false` when that would pass a bound (close the socket). */
  admit(size: number): boolean {
    if (this.#frames + 1 > MAX_QUEUED_FRAMES || this.#bytes + size > this.maxQueuedBytes)
      return false;
    this.#frames += 1;
    this.#bytes += size;
    this.peaks.queuedFrames = Math.max(this.peaks.queuedFrames, this.#frames);
    this.peaks.queuedBytes = Math.max(this.peaks.queuedBytes, this.#bytes);
    return true;
  }

  /** A frame left the queue (its run started). */
  release(size: number): void {
    this.#frames -= 1;
    this.#bytes -= size;
  }

  /** True while `buffered` output bytes are within bounds; records the peak. */
  outputFits(buffered: number): boolean {
    this.peaks.bufferedBytes = Math.max(this.peaks.bufferedBytes, buffered);
    return buffered <= MAX_BUFFERED_BYTES;
  }
}
