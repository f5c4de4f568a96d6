import { StorageError } from "@tenxgraph/core";
import type { AttemptRef, ClaimResult, LedgerClaim, LedgerEntry } from "@tenxgraph/core";
import type Database from "better-sqlite3";
import { toLedgerEntry } from "./rows.js";
import type { ToolExecutionRow } from "./rows.js";
import type { Statements } from "./sql.js";

/** The tool ledger on one connection: `tool_executions`, keyed by (thread, call key). */
export class SqliteLedger {
  readonly #db: Database.Database;
  readonly #sql: Statements;

  constructor(db: Database.Database, sql: Statements) {
    this.#db = db;
    this.#sql = sql;
  }

  getCalls(threadId: string, keys: string[]): LedgerEntry[] {
    // One read transaction: every entry comes from the same snapshot.
    const read = this.#db.transaction(() =>
      [...new Set(keys)].flatMap((key) => {
        const row = this.#sql.selectCall.get(threadId, key) as ToolExecutionRow | undefined;
        return row ? [row] : [];
      }),
    );
    const now = Date.now();
    return read().map((row) => toLedgerEntry(row, now));
  }

  /**
   * The batch is one `BEGIN IMMEDIATE` transaction: the write lock is taken before the first
   * read, so no other process can claim between our read of an entry and our write of it.
   */
  claimCalls(threadId: string, claims: LedgerClaim[]): ClaimResult[] {
    const claimAll = this.#db.transaction(() => {
      const now = new Date();
      return claims.map((claim) => this.#claim(threadId, claim, now));
    });
    return claimAll.immediate();
  }

  completeCall(threadId: string, attempt: AttemptRef, result: unknown): boolean {
    const resultJson = JSON.stringify(result) ?? "null";
    const params = { threadId, ...attempt, resultJson, now: new Date().toISOString() };
    return this.#sql.completeCall.run(params).changes === 1;
  }

  releaseCall(threadId: string, attempt: AttemptRef): boolean {
    return this.#sql.releaseCall.run({ threadId, ...attempt }).changes === 1;
  }

  heartbeatCalls(threadId: string, attempts: AttemptRef[]): void {
    const beat = this.#db.transaction(() => {
      const now = new Date().toISOString();
      for (const attempt of attempts) this.#sql.heartbeatCall.run({ threadId, ...attempt, now });
    });
    beat.immediate();
  }

  listCalls(threadId: string): LedgerEntry[] {
    const rows = this.#sql.selectCalls.all(threadId) as ToolExecutionRow[];
    const now = Date.now();
    return rows.map((row) => toLedgerEntry(row, now));
  }

  /** One claim: expected attempt 0 inserts, n takes over an entry still at attempt n. */
  #claim(threadId: string, claim: LedgerClaim, now: Date): ClaimResult {
    const { key, toolName, ownerRunId, expectedAttempt } = claim;
    const row = this.#sql.selectCall.get(threadId, key) as ToolExecutionRow | undefined;
    const params = { threadId, key, toolName, ownerRunId, expectedAttempt, now: now.toISOString() };
    if (!row) {
      if (expectedAttempt !== 0) {
        // A loss must report the entry that won, and there is none: the thread or its ledger
        // was deleted since the claimant read it. Failing the batch is the only honest answer.
        const why = `cannot take over attempt ${expectedAttempt} of call '${key}' on thread '${threadId}': it has no entry`;
        throw new StorageError("claimCalls", new Error(why));
      }
      this.#sql.insertCall.run(params);
      return { won: true, key, attempt: 1 };
    }
    if (row.attempt !== expectedAttempt) {
      return { won: false, key, entry: toLedgerEntry(row, now.getTime()) };
    }
    this.#sql.takeOverCall.run(params);
    return { won: true, key, attempt: expectedAttempt + 1 };
  }
}
