import type { AttemptRef, ClaimResult, LedgerClaim, LedgerEntry } from "@tenxgraph/core/storage";
import { ClaimLostError, StorageError } from "@tenxgraph/core/storage";
import type Database from "better-sqlite3";
import { toLedgerEntry } from "./rows.js";
import type { ToolExecutionRow } from "./rows.js";
import type { Statements } from "./sql.js";

interface CompletionParams {
  threadId: string;
  key: string;
  attempt: number;
  resultJson: string;
  now: string;
}

/** A result recorded by a step write, its JSON encoded before the transaction. */
export interface EncodedCompletion {
  key: string;
  attempt: number;
  resultJson: string;
}

interface QueuedCompletion {
  params: CompletionParams;
  resolve: (recorded: boolean) => void;
  reject: (error: unknown) => void;
}

/** The tool ledger on one connection: `tool_executions`, keyed by (thread, call key). */
export class SqliteLedger {
  readonly #sql: Statements;
  readonly #mapError: (operation: string, error: unknown) => Error;
  readonly #completeAll: Database.Transaction<(batch: CompletionParams[]) => boolean[]>;
  readonly #claimAll: Database.Transaction<
    (threadId: string, claims: LedgerClaim[]) => ClaimResult[]
  >;
  readonly #heartbeatAll: Database.Transaction<
    (threadId: string, attempts: AttemptRef[], leaseMs: number) => AttemptRef[]
  >;
  #completions: QueuedCompletion[] = [];

  constructor(
    db: Database.Database,
    sql: Statements,
    mapError: (operation: string, error: unknown) => Error,
  ) {
    this.#sql = sql;
    this.#mapError = mapError;
    this.#completeAll = db.transaction((batch: CompletionParams[]) =>
      batch.map((params) => sql.completeCall.run(params).changes === 1),
    );
    this.#claimAll = db.transaction((threadId: string, claims: LedgerClaim[]) => {
      const now = new Date();
      return claims.map((claim) => this.#claim(threadId, claim, now));
    });
    this.#heartbeatAll = db.transaction(
      (threadId: string, attempts: AttemptRef[], leaseMs: number) => {
        const now = Date.now();
        const times = { now: iso(now), leaseExpiresAt: iso(now + leaseMs) };
        // An attempt whose row did not change no longer holds its claim.
        return attempts.filter(
          ({ key, attempt }) =>
            sql.heartbeatCall.run({ threadId, key, attempt, ...times }).changes === 0,
        );
      },
    );
  }

  getCalls(threadId: string, keys: string[]): LedgerEntry[] {
    const keysJson = JSON.stringify([...new Set(keys)]);
    const rows = this.#sql.selectCallsByKey.all(threadId, keysJson) as ToolExecutionRow[];
    const now = Date.now();
    return rows.map((row) => toLedgerEntry(row, now));
  }

  /**
   * The batch is one `BEGIN IMMEDIATE` transaction: the write lock is taken before the first
   * read, so no other process can claim between our read of an entry and our write of it.
   */
  claimCalls(threadId: string, claims: LedgerClaim[]): ClaimResult[] {
    return this.#claimAll.immediate(threadId, claims);
  }

  /**
   * Group commit: completions queued in one turn of the event loop (the sibling calls of a tool
   * node that return together) are committed in one transaction, so they share one fsync. Each
   * promise resolves only after that commit, so "recorded" still means durable.
   */
  completeCall(threadId: string, attempt: AttemptRef, result: unknown): Promise<boolean> {
    const resultJson = JSON.stringify(result) ?? "null";
    const { key, attempt: number } = attempt;
    const params = { threadId, key, attempt: number, resultJson, now: new Date().toISOString() };
    return new Promise((resolve, reject) => {
      this.#completions.push({ params, resolve, reject });
      if (this.#completions.length === 1) setImmediate(() => this.flushCompletions());
    });
  }

  /** Commits the queued completions now; `close()` calls it before closing the connection. */
  flushCompletions(): void {
    const batch = this.#completions;
    if (batch.length === 0) return;
    this.#completions = [];
    let recorded: boolean[];
    try {
      recorded = this.#completeAll.immediate(batch.map((queued) => queued.params));
    } catch (error) {
      const mapped = this.#mapError("completeCall", error);
      for (const queued of batch) queued.reject(mapped);
      return;
    }
    batch.forEach((queued, index) => queued.resolve(recorded[index]!));
  }

  releaseCall(threadId: string, attempt: AttemptRef): boolean {
    return this.#sql.releaseCall.run({ threadId, ...attempt }).changes === 1;
  }

  heartbeatCalls(threadId: string, attempts: AttemptRef[], leaseMs: number): AttemptRef[] {
    return this.#heartbeatAll.immediate(threadId, attempts, leaseMs);
  }

  listCalls(threadId: string): LedgerEntry[] {
    const rows = this.#sql.selectCalls.all(threadId) as ToolExecutionRow[];
    const now = Date.now();
    return rows.map((row) => toLedgerEntry(row, now));
  }

  /**
   * A step write's results, inside the caller's transaction. Each is the update `completeCall`
   * makes, fenced the same way; an entry no longer held by that attempt throws
   * `ClaimLostError`, so the caller's whole transaction rolls back.
   */
  completeInStep(threadId: string, completions: readonly EncodedCompletion[], now: string): void {
    for (const { key, attempt, resultJson } of completions) {
      const recorded = this.#sql.completeCall.run({ threadId, key, attempt, resultJson, now });
      if (recorded.changes !== 1) throw new ClaimLostError(threadId, key, attempt);
    }
  }

  /**
   * A step write's claims, inside the caller's transaction (which wrote the thread row, so it
   * exists). Each inserts an entry where its key has none, with its lease running from `now`; a
   * key that has an entry keeps it untouched, and its claim is lost to that entry.
   */
  claimInStep(threadId: string, claims: readonly LedgerClaim[], now: Date): ClaimResult[] {
    const startedAt = now.toISOString();
    return claims.map(({ key, toolName, ownerRunId, leaseMs }) => {
      const leaseExpiresAt = iso(now.getTime() + leaseMs);
      const params = { threadId, key, toolName, ownerRunId, now: startedAt, leaseExpiresAt };
      if (this.#sql.insertCallIfAbsent.run(params).changes === 1) {
        return { won: true, key, attempt: 1 };
      }
      const row = this.#sql.selectCall.get(threadId, key) as ToolExecutionRow;
      return { won: false, key, entry: toLedgerEntry(row, now.getTime()) };
    });
  }

  /** One claim: expected attempt 0 inserts, n takes over an entry still at attempt n. */
  #claim(threadId: string, claim: LedgerClaim, now: Date): ClaimResult {
    const { key, toolName, ownerRunId, expectedAttempt, leaseMs } = claim;
    const row = this.#sql.selectCall.get(threadId, key) as ToolExecutionRow | undefined;
    const leaseExpiresAt = iso(now.getTime() + leaseMs);
    const times = { now: now.toISOString(), leaseExpiresAt };
    const params = { threadId, key, toolName, ownerRunId, expectedAttempt, ...times };
    if (!row) {
      if (expectedAttempt !== 0) {
        // A loss must report the entry that won, and there is none: the thread or its ledger
        // was deleted since the claimant read it. Failing the batch is the only honest answer.
        const why = `cannot take over attempt ${expectedAttempt} of call '${key}' on thread '${threadId}': it has no entry`;
        throw new StorageError("claimCalls", new Error(why));
      }
      try {
        this.#sql.insertCall.run(params);
      } catch (error) {
        if ((error as { code?: unknown }).code !== "SQLITE_CONSTRAINT_FOREIGNKEY") throw error;
        const why = `cannot claim call '${key}': thread '${threadId}' does not exist (never written, or deleted)`;
        throw new StorageError("claimCalls", new Error(why, { cause: error }));
      }
      return { won: true, key, attempt: 1 };
    }
    if (row.attempt !== expectedAttempt) {
      return { won: false, key, entry: toLedgerEntry(row, now.getTime()) };
    }
    this.#sql.takeOverCall.run(params);
    return { won: true, key, attempt: expectedAttempt + 1 };
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
