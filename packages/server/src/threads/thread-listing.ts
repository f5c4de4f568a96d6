import { Message } from "@tenxgraph/core";
import type { ThreadSummary } from "@tenxgraph/core/storage";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";
import type { ThreadsContext } from "./threads-context.js";
import type { AuthUser } from "../http/server-env.js";
import type { ThreadInfo as WireThreadInfo } from "@tenxgraph/client";
import { threadInfo } from "../wire/wire-thread.js";

/** A page of a listing, and the text its items must contain (ids and names, or message texts). */
export interface PageQuery {
  search?: string | undefined;
  offset: number;
  limit: number;
}

/** The caller's threads only; without auth there are no owners. */
export function ownerFilter(user: AuthUser): { userId?: string } {
  return user.authenticated ? { userId: user.id } : {};
}

/**
 * One page of the listing `filter` selects, as `ThreadInfo`s. Searching filters ids and names
 * after going through all of the listing's threads.
 */
export async function threadPage(
  ctx: ThreadsContext,
  filter: { userId?: string; parentThreadId?: string },
  query: PageQuery,
): Promise<WireThreadInfo[]> {
  const { search, offset, limit } = query;
  const page = search ? {} : { offset, limit };
  const summaries = await ctx.checkpointer.listThreads({ ...filter, ...page });
  const threads = await withCheckpoints(ctx, summaries);
  const infos = threads.map((t) => threadInfo(t));
  if (!search) return infos;
  return infos.filter((t) => matches(t, search)).slice(offset, offset + limit);
}

/**
 * Each thread's checkpoint in place of its summary: names live in the checkpoint, which a
 * summary lacks (one read per thread); a thread deleted in between keeps its summary.
 */
async function withCheckpoints(
  ctx: ThreadsContext,
  threads: ThreadSummary[],
): Promise<(ThreadSummary | ThreadCheckpoint)[]> {
  const checkpoints = await Promise.all(
    threads.map((t) => ctx.checkpointer.getCheckpoint(t.threadId)),
  );
  return threads.map((t, i) => checkpoints[i] ?? t);
}

/** True when the thread's id or name contains `search`. */
function matches(thread: WireThreadInfo, search: string): boolean {
  return thread.thread_id.includes(search) || (thread.thread_name ?? "").includes(search);
}

/** One page of the thread's transcript; with `search`, of the messages whose text holds it. */
export async function messagePage(
  ctx: ThreadsContext,
  threadId: string,
  { search, offset, limit }: PageQuery,
): Promise<Message[]> {
  if (!search) return ctx.checkpointer.listMessages(threadId, { offset, limit });
  const needle = search.toLowerCase();
  const all = await ctx.checkpointer.listMessages(threadId);
  const found = all.filter((m) => Message.text(m).toLowerCase().includes(needle));
  return found.slice(offset, offset + limit);
}

/** The thread's message `messageId`, or a 404. */
export async function findMessage(
  ctx: ThreadsContext,
  threadId: string,
  messageId: string,
): Promise<Message> {
  const found = (await ctx.checkpointer.listMessages(threadId)).find((m) => m.id === messageId);
  if (!found) throw messageNotFound(threadId, messageId);
  return found;
}

/** 404 `NOT_FOUND` for a message the thread does not hold. */
export function messageNotFound(threadId: string, messageId: string): ApiError {
  return new ApiError(404, "NOT_FOUND", `Message '${messageId}' not found in thread '${threadId}'`);
}
