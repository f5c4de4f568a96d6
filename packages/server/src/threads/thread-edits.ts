import { randomUUID } from "node:crypto";
import type { Message } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import type { ServerContext } from "../http/server-context.js";
import { refuseSubgraphThread } from "./subgraph-threads.js";
import type { AuthUser } from "../http/server-env.js";
import { refuseChildThreadId } from "../http/request-limits.js";

/** What a write outside a run changes: field values and messages appended. */
export interface ThreadEdit {
  values?: Record<string, unknown>;
  newMessages?: Message[];
  /** Reset the run position: no current node, no pending interrupts (clearing state). */
  reset?: boolean;
}

/**
 * Commits an edit as the next version of the thread (creating it, owned by `user`, when
 * `checkpoint` is null); a subgraph's thread is refused (409 `SUBGRAPH_THREAD`). Compare-and-swap on the version: a run that commits in between makes
 * this fail with `StaleStateError` (409), and this write makes that run's next step fail.
 */
export async function editThread(
  ctx: ServerContext,
  user: AuthUser,
  threadId: string,
  checkpoint: ThreadCheckpoint | null,
  edit: ThreadEdit,
): Promise<number> {
  // A subgraph's thread moves only with its parent's run: an edit of it alone would leave the
  // parent's step that runs it out of step with it.
  if (checkpoint) refuseSubgraphThread(checkpoint, "be edited");
  else refuseChildThreadId(threadId);
  const reset = edit.reset === true || checkpoint === null;
  return ctx.checkpointer.putCheckpoint({
    threadId,
    // An edit that creates the thread starts its life; any other goes on with the one it read.
    incarnation: checkpoint?.incarnation ?? randomUUID(),
    userId: checkpoint ? checkpoint.userId : user.id,
    step: checkpoint?.step ?? 0,
    currentNode: reset ? null : checkpoint.currentNode,
    status: reset ? "completed" : checkpoint.status,
    values: edit.values ?? checkpoint?.values ?? {},
    interrupts: reset ? [] : checkpoint.interrupts,
    resumeAnswers: reset ? {} : checkpoint.resumeAnswers,
    expectedVersion: checkpoint?.version ?? 0,
    newMessages: edit.newMessages ?? [],
  });
}
