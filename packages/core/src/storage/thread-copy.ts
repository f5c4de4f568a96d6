import { TenxgraphError } from "../errors/tenxgraph-error.js";
import type { ThreadStatus } from "./checkpointer.js";

/** Why a store refused `copyThread`; each leaves both threads as they were. */
export type ThreadCopyRefusal =
  | { reason: "missing" }
  | { reason: "target-exists" }
  | { reason: "child-thread"; parentThreadId: string }
  | { reason: "has-children"; childThreadIds: string[] }
  | { reason: "running" }
  | { reason: "in-doubt"; keys: string[] };

/** What a store read, in the copy's transaction, to decide whether the thread may be copied. */
export interface CopySource {
  /** The source's head, `null` when it does not exist. */
  head: { status: ThreadStatus; parentThreadId: string | null } | null;
  /** True when a thread already has the copy's id. */
  targetExists: boolean;
  /** Ids of the source's direct children (subgraph threads). */
  childThreadIds: string[];
  /** Keys of the source's ledger entries that are `started`. */
  startedKeys: string[];
}

/**
 * The one rule every store applies in the copy's transaction. A started call may have taken
 * effect or not: a copy of it would be in doubt twice, and deciding one would not decide the
 * other, so the call is decided first. A run on the thread may still claim or record calls the
 * copy would miss. A subgraph's thread belongs to its parent's run, and a parent's subgraph
 * threads would not follow it to the copy's id.
 */
export function copyRefusal(source: CopySource): ThreadCopyRefusal | null {
  const { head } = source;
  if (head === null) return { reason: "missing" };
  if (source.targetExists) return { reason: "target-exists" };
  if (head.parentThreadId !== null)
    return { reason: "child-thread", parentThreadId: head.parentThreadId };
  if (source.childThreadIds.length > 0)
    return { reason: "has-children", childThreadIds: source.childThreadIds };
  // A crashed run leaves its thread running with calls in doubt: deciding them is the way on.
  if (source.startedKeys.length > 0) return { reason: "in-doubt", keys: source.startedKeys };
  if (head.status === "running") return { reason: "running" };
  return null;
}

/**
 * `copyThread` refused (`THREAD_008`): nothing was written. `refusal` says why, as data a
 * caller can act on (the in-doubt keys to decide, the parent to copy instead).
 */
export class ThreadCopyError extends TenxgraphError {
  constructor(
    readonly fromThreadId: string,
    readonly toThreadId: string,
    readonly refusal: ThreadCopyRefusal,
  ) {
    super("THREAD_008", `Thread '${fromThreadId}' cannot be copied: ${why(refusal, toThreadId)}`);
  }
}

function why(refusal: ThreadCopyRefusal, to: string): string {
  switch (refusal.reason) {
    case "missing":
      return "it does not exist";
    case "target-exists":
      return `a thread '${to}' already exists`;
    case "child-thread":
      return `it is a subgraph's thread of '${refusal.parentThreadId}'; copy that thread instead`;
    case "has-children":
      return (
        `it has subgraph threads (${refusal.childThreadIds.map((id) => `'${id}'`).join(", ")}), ` +
        `which a copy does not carry`
      );
    case "running":
      return "a run is on it (status running): copy it once the run has ended";
    case "in-doubt":
      return (
        `tool calls ${refusal.keys.map((k) => `'${k}'`).join(", ")} were started and their ` +
        `outcome is unknown (in doubt): decide them first, so the copy cannot run them again`
      );
  }
}
