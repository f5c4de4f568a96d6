/**
 * The chat runs of this process, by thread, with every frame each has sent: a client that lost
 * its connection reads its run again from the start (`GET /v1/chat/{id}/stream`), as the AI
 * SDK's default transport expects of a resumed stream (it replays). A run goes on whether or not
 * anyone reads it; its frames are kept a while after it ends, for a client reconnecting late.
 */
export class LiveChats {
  readonly #byThread = new Map<string, LiveChat>();

  constructor(readonly keepEndedMs = 60_000) {}

  /** A new live run for `threadId`, replacing an ended one. */
  open(threadId: string): LiveChat {
    const chat = new LiveChat();
    this.#byThread.set(threadId, chat);
    void chat.ended.then(() => {
      const forget = setTimeout(() => {
        if (this.#byThread.get(threadId) === chat) this.#byThread.delete(threadId);
      }, this.keepEndedMs);
      forget.unref();
    });
    return chat;
  }

  /** The thread's run in this process, running or recently ended; `undefined` when none. */
  get(threadId: string): LiveChat | undefined {
    return this.#byThread.get(threadId);
  }
}

/** One chat run's frames: appended as the run goes, read by any number of clients. */
export class LiveChat {
  readonly #frames: string[] = [];
  readonly #wakers = new Set<() => void>();
  #done = false;
  #markEnded!: () => void;
  readonly ended = new Promise<void>((resolve) => (this.#markEnded = resolve));

  get done(): boolean {
    return this.#done;
  }

  push(frame: string): void {
    if (this.#done) return;
    this.#frames.push(frame);
    this.#wake();
  }

  end(): void {
    if (this.#done) return;
    this.#done = true;
    this.#wake();
    this.#markEnded();
  }

  /** Every frame from the first, then each new one as it comes, until the run ends or `signal`. */
  async *read(signal: AbortSignal): AsyncGenerator<string> {
    let next = 0;
    while (!signal.aborted) {
      while (next < this.#frames.length) yield this.#frames[next++]!;
      if (this.#done) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#wakers.delete(wake);
          signal.removeEventListener("abort", wake);
          resolve();
        };
        this.#wakers.add(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
  }

  #wake(): void {
    for (const wake of [...this.#wakers]) wake();
  }
}
