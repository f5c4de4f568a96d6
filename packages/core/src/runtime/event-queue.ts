/**
 * An unbounded async queue between the run loop (producer) and a `stream()` consumer. The loop
 * never waits for the consumer: a slow reader cannot stall a tool or a deadline.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #waiting: (() => void) | null = null;
  #closed = false;
  #failure: { error: unknown } | null = null;

  push(item: T): void {
    if (this.#closed) return; // the run is over; late events would never be read
    this.#items.push(item);
    this.#wake();
  }

  close(): void {
    this.#closed = true;
    this.#wake();
  }

  fail(error: unknown): void {
    this.#failure = { error };
    this.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      while (this.#items.length > 0) yield this.#items.shift()!;
      if (this.#closed) break;
      await new Promise<void>((resolve) => (this.#waiting = resolve));
    }
    if (this.#failure) throw this.#failure.error;
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = null;
    waiting?.();
  }
}
