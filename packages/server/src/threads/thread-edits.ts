import { Message } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import type { ThreadsContext } from "./threads-context.js";
import type { AuthUser } from "../http/server-env.js";
import { fromWireMessage } from "../wire/convert-message.js";
import { wireMessagesOf, type UpdateStateBody } from "../wire/request-schemas.js";
import { refusePrivilegedEdit } from "./state-edit-policy.js";
import { mergeState } from "./state-merge.js";
import { messageNotFound } from "./thread-listing.js";
import { storedThreadName, THREAD_NAME_FIELD } from "./thread-name.js";
import { LG_THREAD_FIELD } from "../wire/thread-name-field.js";
import { refuseChildThreadId, refuseSubgraphThread } from "./subgraph-threads.js";

/** What a write outside a run changes: field values and messages appended. */
export interface ThreadEdit {
  values?: Record<string, unknown>;
  newMessages?: Message[];
  /** Reset the run position: no current node, no pending interrupts (clearing state). */
  reset?: boolean;
}

/**
 * Commits an edit through the engine (`writeState`) as the next version of the thread, creating
 * it, owned by `user`, when `checkpoint` is null; a subgraph's thread is refused (409
 * `SUBGRAPH_THREAD`). Compare-and-swap on the version read: a run that commits in between makes
 * this fail with `StaleStateError` (409), and this write makes that run's next step fail.
 */
export async function editThread(
  ctx: ThreadsContext,
  user: AuthUser,
  threadId: string,
  checkpoint: ThreadCheckpoint | null,
  edit: ThreadEdit,
): Promise<number> {
  // A subgraph's thread moves only with its parent's run: an edit of it alone would leave the
  // parent's step that runs it out of step with it.
  if (checkpoint) refuseSubgraphThread(checkpoint, "be edited");
  else refuseChildThreadId(threadId);
  return ctx.graph.writeState(
    { threadId, userId: user.id },
    {
      ...(edit.values ? { values: edit.values } : {}),
      appendMessages: edit.newMessages ?? [],
      resetPosition: edit.reset === true,
      expectedVersion: checkpoint?.version ?? 0,
    },
  );
}

/**
 * `PUT …/state`: 10xGraph's merge of `update` into the stored fields, and the messages it
 * carries (`context`) appended. Refused before anything is written when the user may not add
 * what it adds (tool calls or results).
 */
export async function putThreadState(
  ctx: ThreadsContext,
  user: AuthUser,
  threadId: string,
  checkpoint: ThreadCheckpoint | null,
  update: Record<string, unknown>,
): Promise<number> {
  const appended = wireMessagesOf(update).map(fromWireMessage);
  refusePrivilegedEdit(ctx.stateEdits, user, { messages: appended });
  const values = mergeState(checkpoint?.values ?? {}, update);
  return editThread(ctx, user, threadId, checkpoint, { values, newMessages: appended });
}

/**
 * `DELETE …/state`: resets the state fields and the run position. The transcript is
 * append-only (message ids and the ledger key on it), so the messages stay; so does the
 * thread's name, which is the thread's, not its state's.
 */
export async function clearThreadState(
  ctx: ThreadsContext,
  user: AuthUser,
  checkpoint: ThreadCheckpoint,
): Promise<number> {
  // The thread's name and its LangGraph record are the thread's, not its state's: they stay.
  const name = storedThreadName(checkpoint.values);
  const record = checkpoint.values[LG_THREAD_FIELD];
  const values = {
    ...(name === null ? {} : { [THREAD_NAME_FIELD]: name }),
    ...(record === undefined ? {} : { [LG_THREAD_FIELD]: record }),
  };
  return editThread(ctx, user, checkpoint.threadId, checkpoint, { values, reset: true });
}

/** `POST …/messages`: appends `messages`, creating the thread when it does not exist. */
export async function appendThreadMessages(
  ctx: ThreadsContext,
  user: AuthUser,
  threadId: string,
  checkpoint: ThreadCheckpoint | null,
  messages: Message[],
): Promise<number> {
  refusePrivilegedEdit(ctx.stateEdits, user, { messages });
  return editThread(ctx, user, threadId, checkpoint, { newMessages: messages });
}

/**
 * Removes the message as the thread's next version (404 when the thread does not hold it). The
 * versions before keep it (nothing stored is rewritten), and the ledger keeps its calls, so
 * removing one never lets a call run twice. The caller refused a subgraph's thread.
 */
export async function deleteThreadMessage(
  ctx: ThreadsContext,
  checkpoint: ThreadCheckpoint,
  messageId: string,
): Promise<number> {
  const { threadId } = checkpoint;
  const state = await ctx.graph.getState({ threadId });
  if (!state?.values.messages.some((message) => message.id === messageId)) {
    throw messageNotFound(threadId, messageId);
  }
  return ctx.graph.updateState({ threadId }, { messages: [Message.remove(messageId)] });
}

/**
 * `POST …/state/update`: the update through the graph's reducers, optionally as a node. The
 * caller refused a subgraph's thread.
 */
export async function updateThreadState(
  ctx: ThreadsContext,
  user: AuthUser,
  checkpoint: ThreadCheckpoint,
  body: UpdateStateBody,
): Promise<number> {
  const added = body.messages.map(fromWireMessage);
  refusePrivilegedEdit(ctx.stateEdits, user, { messages: added, asNode: body.as_node });
  const update = {
    ...body.values,
    messages: [...body.remove_message_ids.map((id) => Message.remove(id)), ...added],
  };
  const options = body.as_node === undefined ? {} : { asNode: body.as_node };
  return ctx.graph.updateState({ threadId: checkpoint.threadId }, update, options);
}
