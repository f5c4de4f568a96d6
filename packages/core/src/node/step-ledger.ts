import type { Logger } from "../events/logger.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { Checkpointer, LedgerCompletion, StepLedgerWrites } from "../storage/checkpointer.js";
import type { AttemptRef, ClaimResult, LedgerClaim } from "../storage/ledger-entry.js";
import type { HeldClaim, RunWatch } from "./run-watch.js";

/** A result waiting for the step's write, and the claim heartbeated until that write lands. */
export interface RidingResult {
  completion: LedgerCompletion;
  held: HeldClaim | null;
  /**
   * Records the result on its own (`completeCall`), when the step write cannot carry it or
   * failed. Throws `ClaimLostError` when fenced out; logs and counts any other failure.
   */
  recordAlone(): Promise<void>;
  /** Reports that the step write carrying the result failed, maybe before it applied. */
  reportUnrecorded(error: unknown): void;
}

/** A claim won in the write of the step that issued its call, waiting for its tool to run. */
export interface ClaimAhead {
  attempt: number;
  held: HeldClaim;
}

/**
 * The ledger writes of one run that ride in its step writes (ledger protocol v2, see
 * `model/README.md`), so a turn of `retry` tools commits once per step:
 *
 * - **Riding results.** The last call of a node to return leaves its result here instead of
 *   recording it; the next durable write commits it, fenced on its attempt. Moving the record
 *   into that transaction moves no guarantee: a crash before the commit leaves the call in doubt,
 *   as a crash before its own record would. If that write is refused as stale, the result is
 *   recorded on its own, so a live run's completed call does not turn into one in doubt. Its
 *   claim is heartbeated until then.
 * - **Claims ahead.** The claims of the next node's `retry` calls ride in the write of the step
 *   that issued them. The tool node then runs them without claiming. A crash in between makes
 *   them look in doubt, and `retry` runs them: what a fresh claim would have done.
 *
 * A store without `commitStep` gets neither: results are recorded as they return, and every
 * call is claimed by its node, as in protocol v1.
 */
export class StepLedger {
  readonly #checkpointer: Checkpointer;
  readonly #threadId: string;
  readonly #logger: Logger;
  #riding: RidingResult[] = [];
  readonly #ahead = new Map<string, ClaimAhead>();

  constructor(checkpointer: Checkpointer, threadId: string, logger: Logger) {
    this.#checkpointer = checkpointer;
    this.#threadId = threadId;
    this.#logger = logger;
  }

  /** True when results and claims can ride in step writes: the store commits them together. */
  get rides(): boolean {
    return typeof this.#checkpointer.commitStep === "function";
  }

  /** Leaves a result for the next step write; its claim is released once it is written. */
  ride(result: RidingResult): void {
    this.#riding.push(result);
  }

  /** The claim this run won ahead for `key`, handed over once to the call that runs it. */
  takeClaimAhead(key: string): ClaimAhead | undefined {
    const ahead = this.#ahead.get(key);
    this.#ahead.delete(key);
    return ahead;
  }

  /**
   * Commits the waiting results and `claims` with a checkpoint: `write` is the step's write
   * with these ledger writes, the store's `commitStep`. Claims won are heartbeated by `watch`
   * until their tools run. When the write is refused as stale, the results are recorded on
   * their own before the error goes on.
   */
  async commitWith<T>(
    claims: readonly LedgerClaim[],
    watch: RunWatch,
    write: (ledger: StepLedgerWrites) => Promise<{ result: T; claims: ClaimResult[] }>,
  ): Promise<T> {
    const riding = this.#takeRiding();
    const ledger = { completions: riding.map((r) => r.completion), claims };
    let committed: { result: T; claims: ClaimResult[] };
    try {
      committed = await write(ledger);
    } catch (error) {
      // Refused as stale, the write applied nothing and the store answered: the results are
      // recorded on their own, so a live run's completed calls are not left in doubt. After any
      // other failure the write may or may not have applied and the store is likely out of
      // reach; the calls are left to the next run, in doubt if the write did not land (as a
      // crash there would). A lost claim is the taker's, and so is its record.
      if (isTenxgraphError(error, "STORAGE_CONFLICT_001")) {
        await this.#recordAlone(riding, false);
      } else if (!isTenxgraphError(error, "TOOL_CONFLICT_002")) {
        for (const result of riding) result.reportUnrecorded(error);
      }
      throw error;
    } finally {
      for (const { held } of riding) held?.release();
    }
    for (const result of committed.claims) {
      if (!result.won) continue;
      const ref: AttemptRef = { key: result.key, attempt: result.attempt };
      this.#ahead.set(result.key, { attempt: result.attempt, held: watch.hold(ref) });
    }
    return committed.result;
  }

  /**
   * Records the waiting results on their own, before a write that cannot carry them (a step
   * kept in the cache, or a store without `commitStep`). A record fenced out throws
   * `ClaimLostError`, as a record made when the tool returned would have: the node's result is
   * a zombie's and must not be written.
   */
  async recordWaiting(): Promise<void> {
    const riding = this.#takeRiding();
    try {
      await this.#recordAlone(riding, true);
    } finally {
      for (const { held } of riding) held?.release();
    }
  }

  /**
   * At the run's end: results still waiting (its last write failed before taking them) are
   * recorded, and claims won ahead whose tools never ran are handed back (`releaseCall`): those
   * calls did not start, so they are not in doubt.
   */
  async settle(): Promise<void> {
    await this.recordWaiting().catch((error: unknown) => {
      this.#logger.warn({ err: error }, "A result waiting for the step write was fenced out");
    });
    const unused = [...this.#ahead];
    this.#ahead.clear();
    for (const [key, { attempt, held }] of unused) {
      held.release();
      try {
        await this.#checkpointer.releaseCall(this.#threadId, { key, attempt });
      } catch (error) {
        // The claim stays `started`: a later run finds it in doubt and, `retry`, runs it. Safe.
        this.#logger.warn({ err: error, key }, "Could not hand back a claim made ahead");
      }
    }
  }

  #takeRiding(): RidingResult[] {
    const riding = this.#riding;
    this.#riding = [];
    return riding;
  }

  /**
   * Records each result on its own; the store batches the records of one tick into one commit.
   * A record fenced out throws only when `fenced` asks for it (the run is not failing already).
   */
  async #recordAlone(riding: readonly RidingResult[], fenced: boolean): Promise<void> {
    const outcomes = await Promise.allSettled(riding.map((result) => result.recordAlone()));
    const lost = outcomes.find((outcome) => outcome.status === "rejected");
    if (fenced && lost) throw lost.reason;
  }
}
