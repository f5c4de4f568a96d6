import { StorageError } from "../errors/errors.js";
import { jsonCopy } from "./json-copy.js";
import type {
  AttemptRef,
  ClaimResult,
  LedgerClaim,
  LedgerEntry,
  StartedLedgerEntry,
} from "./ledger-entry.js";

/** A started entry as kept: the time left on its lease is computed when it is read. */
type StoredStarted = Omit<StartedLedgerEntry, "leaseExpiresInMs">;

/** A ledger entry as kept. */
type StoredEntry = Exclude<LedgerEntry, StartedLedgerEntry> | StoredStarted;

/**
 * The in-memory store's tool ledger: entries per thread, by key. A Map keeps first-claim order,
 * which `listCalls` returns. Every method is synchronous, so the store can apply a step's
 * completions and claims with its checkpoint, with no await in between.
 */
export class InMemoryLedger {
  readonly #clock: () => Date;
  readonly #ledgers = new Map<string, Map<string, StoredEntry>>();

  constructor(clock: () => Date) {
    this.#clock = clock;
  }

  /** True when the entry of `attempt.key` is started by exactly that attempt. */
  holds(threadId: string, attempt: AttemptRef): boolean {
    const held = this.#ledgers.get(threadId)?.get(attempt.key);
    return held?.status === "started" && held.attempt === attempt.attempt;
  }

  delete(threadId: string): void {
    this.#ledgers.delete(threadId);
  }

  /** Keys of the thread's `started` entries: calls claimed and not yet recorded. */
  startedKeys(threadId: string): string[] {
    const entries = [...(this.#ledgers.get(threadId)?.values() ?? [])];
    return entries.filter((entry) => entry.status === "started").map((entry) => entry.key);
  }

  /** Gives thread `to` a copy of `from`'s entries, in the same order. */
  copy(from: string, to: string): void {
    const ledger = this.#ledgers.get(from);
    if (ledger) this.#ledgers.set(to, new Map(jsonCopy([...ledger])));
  }

  get(threadId: string, keys: string[]): LedgerEntry[] {
    const ledger = this.#ledgers.get(threadId);
    const entries = [...new Set(keys)].flatMap((key) => ledger?.get(key) ?? []);
    return entries.map((entry) => this.#read(entry));
  }

  list(threadId: string): LedgerEntry[] {
    return [...(this.#ledgers.get(threadId)?.values() ?? [])].map((entry) => this.#read(entry));
  }

  claimAll(threadId: string, claims: readonly LedgerClaim[]): ClaimResult[] {
    // Claims go to a staging overlay that is applied only once every claim succeeded: the batch
    // is one transaction, and its cost does not grow with the thread's ledger.
    const ledger = this.#ledgers.get(threadId) ?? new Map<string, StoredEntry>();
    const staged = new Map<string, StoredEntry>();
    const view = {
      get: (key: string) => staged.get(key) ?? ledger.get(key),
      set: (key: string, entry: StoredEntry) => staged.set(key, entry),
    };
    const results = claims.map((claim) => this.#claim(threadId, view, claim));
    for (const [key, entry] of staged) ledger.set(key, entry);
    this.#ledgers.set(threadId, ledger);
    return results;
  }

  /** `owned`: `result` is already this store's own copy (a step write's, copied whole). */
  complete(threadId: string, attempt: AttemptRef, result: unknown, owned = false): boolean {
    return this.#replaceHeld(
      threadId,
      attempt,
      // Field by field, in the started entry's order: a rest and a spread made a new hidden
      // class per entry (microseconds each on Node 20, and kept as long as the entry).
      (held) => ({
        key: held.key,
        toolName: held.toolName,
        attempt: held.attempt,
        ownerRunId: held.ownerRunId,
        startedAt: held.startedAt,
        status: "completed",
        result: owned ? result : jsonCopy(result),
        completedAt: this.#clock().toISOString(),
      }),
    );
  }

  release(threadId: string, attempt: AttemptRef): boolean {
    return this.#replaceHeld(
      threadId,
      attempt,
      ({ heartbeatAt: _, leaseExpiresAt: __, ...held }) => ({
        ...held,
        status: "interrupted",
      }),
    );
  }

  /** Renews the claims these attempts still hold; returns the attempts it did not renew. */
  renew(threadId: string, attempts: AttemptRef[], leaseMs: number): AttemptRef[] {
    const now = this.#clock().getTime();
    const heartbeatAt = new Date(now).toISOString();
    const leaseExpiresAt = new Date(now + leaseMs).toISOString();
    return attempts.filter(
      (attempt) =>
        !this.#replaceHeld(threadId, attempt, (held) => ({ ...held, heartbeatAt, leaseExpiresAt })),
    );
  }

  /** One claim against `ledger`: expected attempt 0 inserts, n takes over attempt n. */
  #claim(
    threadId: string,
    ledger: Pick<Map<string, StoredEntry>, "get" | "set">,
    claim: LedgerClaim,
  ): ClaimResult {
    const existing = ledger.get(claim.key);
    if (!existing) {
      if (claim.expectedAttempt !== 0) {
        // A loss must report the entry that won, and there is none: the thread or its ledger
        // was deleted since the claimant read it. Failing the batch is the only honest answer.
        const attempt = `attempt ${claim.expectedAttempt} of call '${claim.key}'`;
        const why = `cannot take over ${attempt} on thread '${threadId}': it has no entry`;
        throw new StorageError("claimCalls", new Error(why));
      }
    } else if (existing.attempt !== claim.expectedAttempt) {
      return { won: false, key: claim.key, entry: this.#read(existing) };
    }
    const now = this.#clock().getTime();
    const startedAt = new Date(now).toISOString();
    const entry: StoredEntry = {
      key: claim.key,
      toolName: claim.toolName,
      attempt: claim.expectedAttempt + 1,
      ownerRunId: claim.ownerRunId,
      startedAt,
      status: "started",
      heartbeatAt: startedAt,
      leaseExpiresAt: new Date(now + claim.leaseMs).toISOString(),
    };
    ledger.set(claim.key, entry);
    return { won: true, key: claim.key, attempt: entry.attempt };
  }

  /**
   * Fencing: replaces the entry only while it is `started` by exactly `ref.attempt`, so a zombie
   * attempt (timed out, stopped, superseded) can never overwrite the ledger.
   */
  #replaceHeld(
    threadId: string,
    ref: AttemptRef,
    next: (held: StoredStarted) => StoredEntry,
  ): boolean {
    const ledger = this.#ledgers.get(threadId);
    const held = ledger?.get(ref.key);
    if (!ledger || held?.status !== "started" || held.attempt !== ref.attempt) return false;
    ledger.set(ref.key, next(held));
    return true;
  }

  /** A copy for the caller; a started entry gets the time left on its lease by this store's clock. */
  #read(entry: StoredEntry): LedgerEntry {
    const copy = jsonCopy(entry);
    if (copy.status !== "started") return copy;
    const leaseExpiresInMs = Date.parse(copy.leaseExpiresAt) - this.#clock().getTime();
    return Object.assign(copy, { leaseExpiresInMs });
  }
}
