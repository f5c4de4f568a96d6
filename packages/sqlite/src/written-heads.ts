import type { SeqRanges, StoreWrite } from "@tenxgraph/core/storage";

/** A version this connection committed, as the next write of its thread needs it. */
export interface WrittenHead {
  incarnation: string;
  version: number;
  status: string;
  transcript: SeqRanges;
}

/** How many threads' heads a connection remembers; a few dozen bytes each. */
const REMEMBERED_THREADS = 1024;

/**
 * The versions this connection committed last, by thread, so that a run's next step need not
 * read back what its last one wrote: the parent's transcript, and whether the status changes.
 * A head is used only by a write that continues it (same version, same life, not a fork), and
 * that write's compare-and-swap on the thread row, in the same transaction, proves the head is
 * still the thread's: a version of one life never changes, and no pruning removes the head.
 * The threads written longest ago are forgotten first.
 */
export class WrittenHeads {
  readonly #heads = new Map<string, WrittenHead>();

  /** The head `write` continues, if this connection wrote it. */
  continued(write: StoreWrite): WrittenHead | undefined {
    if (write.parentVersion !== write.expectedVersion) return undefined;
    const head = this.#heads.get(write.threadId);
    const current = head?.version === write.expectedVersion;
    return current && head.incarnation === write.incarnation ? head : undefined;
  }

  /** Called once the write of `head` committed. */
  remember(threadId: string, head: WrittenHead): void {
    this.#heads.delete(threadId); // re-inserted last: the Map's order is the order of writes
    this.#heads.set(threadId, head);
    if (this.#heads.size > REMEMBERED_THREADS) {
      this.#heads.delete(this.#heads.keys().next().value!);
    }
  }

  forget(threadId: string): void {
    this.#heads.delete(threadId);
  }
}
