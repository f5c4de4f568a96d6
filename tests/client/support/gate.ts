/**
 * A gate a graph node waits at, opened and closed by the test (the server runs in the test's
 * process). Open by default. While closed, a waiting node calls `tick` every few milliseconds,
 * so a stream keeps sending chunks and the server notices a client that went away.
 */
export class Gate {
  #open = true;
  #opened: (() => void)[] = [];
  /** How many nodes are waiting at the gate now. */
  waiting = 0;

  close(): void {
    this.#open = false;
  }

  open(): void {
    this.#open = true;
    for (const resolve of this.#opened.splice(0)) resolve();
  }

  /** Resolves when the gate is open; rejects when `signal` aborts (stop, stream closed). */
  async pass(signal: AbortSignal, tick: () => void = () => {}): Promise<void> {
    if (this.#open) return;
    this.waiting += 1;
    const timer = setInterval(tick, 20);
    try {
      await new Promise<void>((resolve, reject) => {
        this.#opened.push(resolve);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        if (signal.aborted) reject(signal.reason);
      });
    } finally {
      clearInterval(timer);
      this.waiting -= 1;
    }
  }
}
