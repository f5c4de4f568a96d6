import type { AttemptRef, ClaimResult, LedgerClaim, LedgerEntry } from "@tenxgraph/core/storage";
import { StorageError } from "@tenxgraph/core/storage";
import type { Database } from "../connection/database.js";
import { toJsonb } from "../json.js";
import { TOOL_EXECUTION_COLUMNS, toLedgerEntry } from "../rows.js";
import type { ToolExecutionRow } from "../rows.js";

interface QueuedCompletion {
  threadId: string;
  key: string;
  attempt: number;
  result: string;
  resolve: (recorded: boolean) => void;
  reject: (error: unknown) => void;
}

type ClaimRow = ToolExecutionRow & { claim_index: number; won: boolean };

/** The tool ledger in `tool_executions`, keyed by (thread, call key). */
export class PgLedger {
  readonly #db: Database;
  #completions: QueuedCompletion[] = [];
  #flushing: Promise<void> = Promise.resolve();

  constructor(db: Database) {
    this.#db = db;
  }

  async getCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]> {
    const rows = await this.#db.query<ToolExecutionRow>(
      "getCalls",
      "repeatable",
      `SELECT ${TOOL_EXECUTION_COLUMNS} FROM tool_executions
       WHERE thread_id = $1 AND call_key = ANY($2::text[])`,
      [threadId, [...new Set(keys)]],
    );
    return rows.map(toLedgerEntry);
  }

  /**
   * One statement (`tenxgraph_claim_calls`), so one round trip and one transaction for the
   * batch. It is sent again after a broken connection: our own claim, if it had committed, then
   * shows up as lost to an entry this run holds at exactly the attempt we asked for, and is
   * counted as won. No tool has run yet, so nothing can happen twice.
   */
  async claimCalls(threadId: string, claims: LedgerClaim[]): Promise<ClaimResult[]> {
    if (claims.length === 0) return [];
    let resent = false;
    const rows = await this.#db.query<ClaimRow>(
      "claimCalls",
      "repeatable",
      "SELECT * FROM tenxgraph_claim_calls($1, $2::jsonb)",
      (tryNumber) => {
        resent = tryNumber > 1;
        return [threadId, JSON.stringify(claims)];
      },
    );
    const results: ClaimResult[] = new Array<ClaimResult>(claims.length);
    const firstOfKey = new Map<string, number>();
    claims.forEach(({ key }, index) => firstOfKey.set(key, firstOfKey.get(key) ?? index));
    for (const row of rows) {
      const index = row.claim_index;
      const claim = claims[index]!;
      const ours = resent && firstOfKey.get(claim.key) === index && isOwnEarlierClaim(row, claim);
      results[index] =
        row.won || ours
          ? { won: true, key: claim.key, attempt: row.attempt }
          : { won: false, key: claim.key, entry: toLedgerEntry(row) };
    }
    return results;
  }

  /**
   * Group commit: completions queued in one turn of the event loop (sibling calls that return
   * together) are recorded by one statement, so they share one commit. Each promise resolves
   * only after that commit, so "recorded" still means durable.
   */
  completeCall(threadId: string, attempt: AttemptRef, result: unknown): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const queued = { threadId, ...attempt, result: toJsonb(result), resolve, reject };
      this.#completions.push(queued);
      if (this.#completions.length === 1) {
        setImmediate(() => (this.#flushing = this.#flushing.then(() => this.#flush())));
      }
    });
  }

  /** Waits until every queued completion has been written (or has failed). */
  async drain(): Promise<void> {
    await this.#flush();
    await this.#flushing;
  }

  async releaseCall(threadId: string, { key, attempt }: AttemptRef): Promise<boolean> {
    const rows = await this.#db.query(
      "releaseCall",
      "repeatable",
      `UPDATE tool_executions
       SET status = 'interrupted', heartbeat_at = NULL, lease_expires_at = NULL
       WHERE thread_id = $1 AND call_key = $2 AND attempt = $3 AND status = 'started'
       RETURNING 1`,
      [threadId, key, attempt],
    );
    return rows.length === 1;
  }

  /**
   * Renews the lease of the attempts that still hold their claim, by the server's clock, and
   * returns the others. Sent again after a broken connection it renews again: harmless.
   */
  async heartbeatCalls(
    threadId: string,
    attempts: AttemptRef[],
    leaseMs: number,
  ): Promise<AttemptRef[]> {
    if (attempts.length === 0) return [];
    const rows = await this.#db.query<{ call_key: string; attempt: number }>(
      "heartbeatCalls",
      "repeatable",
      `UPDATE tool_executions t
       SET heartbeat_at = now(), lease_expires_at = now() + $4::double precision * interval '1 millisecond'
       FROM unnest($2::text[], $3::integer[]) AS h(call_key, attempt)
       WHERE t.thread_id = $1 AND t.call_key = h.call_key AND t.attempt = h.attempt
         AND t.status = 'started'
       RETURNING t.call_key, t.attempt`,
      [threadId, attempts.map((a) => a.key), attempts.map((a) => a.attempt), leaseMs],
    );
    const held = new Set(rows.map((row) => JSON.stringify([row.call_key, row.attempt])));
    return attempts.filter(({ key, attempt }) => !held.has(JSON.stringify([key, attempt])));
  }

  async listCalls(threadId: string): Promise<LedgerEntry[]> {
    const rows = await this.#db.query<ToolExecutionRow>(
      "listCalls",
      "repeatable",
      `SELECT ${TOOL_EXECUTION_COLUMNS} FROM tool_executions WHERE thread_id = $1
       ORDER BY claim_batch, claim_index`,
      [threadId],
    );
    return rows.map(toLedgerEntry);
  }

  async #flush(): Promise<void> {
    const batch = this.#completions;
    if (batch.length === 0) return;
    this.#completions = [];
    try {
      const recorded = await this.#record(batch);
      for (const queued of batch) queued.resolve(recorded.has(completionId(queued)));
    } catch (error) {
      for (const queued of batch) queued.reject(error);
    }
  }

  /**
   * Fenced: only the attempt that holds the claim may record its result. Sent again after a
   * broken connection, the update finds its own record: an entry completed at an attempt is
   * that attempt's, since no other holds it, so it counts as recorded.
   */
  async #record(batch: QueuedCompletion[]): Promise<Set<string>> {
    const rows = await this.#db.query<{ thread_id: string; call_key: string; attempt: number }>(
      "completeCall",
      "repeatable",
      `WITH c AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::jsonb[])
           AS c(thread_id, call_key, attempt, result)
       )
       UPDATE tool_executions t
       SET status = 'completed', result = c.result, completed_at = now(), heartbeat_at = NULL,
           lease_expires_at = NULL
       FROM c
       WHERE t.thread_id = c.thread_id AND t.call_key = c.call_key AND t.attempt = c.attempt
         AND (t.status = 'started' OR ($5::boolean AND t.status = 'completed'))
       RETURNING t.thread_id, t.call_key, t.attempt`,
      (tryNumber) => [
        batch.map((q) => q.threadId),
        batch.map((q) => q.key),
        batch.map((q) => q.attempt),
        batch.map((q) => q.result),
        tryNumber > 1,
      ],
    );
    return new Set(rows.map(completionId));
  }
}

function completionId(row: {
  threadId?: string;
  thread_id?: string;
  key?: string;
  call_key?: string;
  attempt: number;
}): string {
  return JSON.stringify([row.threadId ?? row.thread_id, row.key ?? row.call_key, row.attempt]);
}

/** A lost claim that is really ours, committed before a broken connection made us resend it. */
function isOwnEarlierClaim(row: ClaimRow, claim: LedgerClaim): boolean {
  return (
    row.status === "started" &&
    row.owner_run_id === claim.ownerRunId &&
    row.attempt === claim.expectedAttempt + 1
  );
}

export function missingThread(threadId: string, error: unknown): StorageError {
  const why = `cannot claim calls: thread '${threadId}' does not exist (never written, or deleted)`;
  return new StorageError("claimCalls", new Error(why, { cause: error }));
}
