import type { ThreadCheckpoint, ThreadStatus } from "@tenxgraph/core/storage";
import { copyRefusal, ThreadCopyError } from "@tenxgraph/core/storage";
import { toCheckpoint } from "./rows.js";
import type { CheckpointRow } from "./rows.js";
import type { Statements } from "./sql.js";

/**
 * Copies thread `from` to `to`: its row (a new life, listed as just created, no parent, no
 * delete-after time), every `states` row, every message row (the same `seq`s, which the
 * versions' transcripts name) and every ledger entry (the same `claim_seq`s, so the copy lists
 * them in the same order). Run in one `BEGIN IMMEDIATE` transaction: the reads `copyRefusal`
 * decides on and the copy see one state of the file, and a crash keeps all of it or none.
 */
export function copyThread(
  sql: Statements,
  from: string,
  to: string,
  incarnation: string,
): ThreadCheckpoint {
  const head = sql.selectCheckpoint.get(from) as CheckpointRow | undefined;
  const children = sql.selectChildThreadIds.all(from) as { thread_id: string }[];
  const started = sql.selectStartedCallKeys.all(from) as { call_key: string }[];
  const refusal = copyRefusal({
    head: head
      ? { status: head.status as ThreadStatus, parentThreadId: head.parent_thread_id }
      : null,
    targetExists: sql.selectVersion.get(to) !== undefined,
    childThreadIds: children.map((row) => row.thread_id),
    startedKeys: started.map((row) => row.call_key),
  });
  if (refusal !== null) throw new ThreadCopyError(from, to, refusal);
  const params = { from, to, incarnation, now: new Date().toISOString() };
  sql.copyThreadRow.run(params);
  sql.copyStates.run(params);
  sql.copyMessages.run(params);
  sql.copyCalls.run(params);
  return toCheckpoint(sql.selectCheckpoint.get(to) as CheckpointRow);
}
