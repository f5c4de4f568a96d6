import type { ThreadSummary } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import type { Hono } from "hono";
import { ok } from "../http/envelope.js";
import { authorizeThread, requireThread } from "./ownership.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import {
  configBodySchema,
  pageQuerySchema,
  putStateSchema,
  stateQuerySchema,
  wireMessagesOf,
} from "../wire/request-schemas.js";
import { ApiError } from "../http/api-error.js";
import type { ServerContext } from "../http/server-context.js";
import type { AuthUser, ServerEnv } from "../http/server-env.js";
import { mergeState } from "./state-merge.js";
import { threadInfo } from "./subgraph-threads.js";
import { storedThreadName, THREAD_NAME_FIELD } from "./thread-name.js";
import { editThread } from "./thread-edits.js";
import { refusePrivilegedEdit } from "./state-edit-policy.js";
import { fromWireMessage } from "../wire/convert-message.js";
import { toWireState } from "../wire/wire-state.js";

/**
 * Threads: list (the caller's top-level threads only: a subgraph's threads are its parent's),
 * a thread's child threads, details, state get/put/clear, delete (with the thread's child threads).
 */
export function threadRoutes(app: Hono<ServerEnv>, ctx: ServerContext): void {
  app.get("/v1/threads", async (c) => {
    const query = readQuery(c, pageQuerySchema);
    return ok(c, { threads: await threadPage(ctx, ownerFilter(c.get("user")), query) });
  });

  app.get("/v1/threads/:thread_id/children", async (c) => {
    const threadId = pathId(c, "thread_id");
    const user = c.get("user");
    await requireThread(ctx.checkpointer, user, threadId, "read");
    const query = readQuery(c, pageQuerySchema);
    const filter = { ...ownerFilter(user), parentThreadId: threadId };
    return ok(c, { threads: await threadPage(ctx, filter, query) });
  });

  app.get("/v1/threads/:thread_id", async (c) => {
    const threadId = pathId(c, "thread_id");
    const checkpoint = await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "read");
    const thread = checkpoint ? threadInfo(checkpoint) : null;
    return ok(c, { thread_data: { thread } });
  });

  app.delete("/v1/threads/:thread_id", async (c) => {
    const threadId = pathId(c, "thread_id");
    // A thread that does not exist is a 404, as for every other action on one thread.
    await requireThread(ctx.checkpointer, c.get("user"), threadId, "delete");
    await readBody(c, configBodySchema);
    // Its runs go first: a queued one would otherwise re-create the thread, and their inputs
    // and events would reach whoever uses the id next.
    await ctx.runs?.store.deleteThreadRuns(threadId);
    await ctx.graph.deleteThread({ threadId });
    return ok(c, {
      success: true,
      message: "Thread deleted successfully",
      data: { thread_id: threadId },
    });
  });

  app.get("/v1/threads/:thread_id/state", async (c) => {
    const threadId = pathId(c, "thread_id");
    const checkpoint = await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "read");
    const { version } = readQuery(c, stateQuerySchema);
    const state = await ctx.graph.getState(
      version === undefined ? { threadId } : { threadId, version },
    );
    if (version !== undefined && state === null && checkpoint !== null) {
      throw new ApiError(
        404,
        "VERSION_NOT_FOUND",
        `Thread '${threadId}' has no version ${version} (latest: ${checkpoint.version}; pruned versions are gone)`,
      );
    }
    return ok(c, { state: state ? toWireState(threadId, state) : null });
  });

  app.put("/v1/threads/:thread_id/state", async (c) => {
    const threadId = pathId(c, "thread_id");
    const user = c.get("user");
    const checkpoint = await authorizeThread(ctx.checkpointer, user, threadId, "write");
    const body = await readBody(c, putStateSchema);
    const appended = wireMessagesOf(body.state).map(fromWireMessage);
    refusePrivilegedEdit(ctx.stateEdits, user, { messages: appended });
    const values = mergeState(checkpoint?.values ?? {}, body.state);
    await editThread(ctx, user, threadId, checkpoint, { values, newMessages: appended });
    const state = await ctx.graph.getState({ threadId });
    return ok(c, { state: state ? toWireState(threadId, state) : null });
  });

  app.delete("/v1/threads/:thread_id/state", async (c) => {
    const threadId = pathId(c, "thread_id");
    const user = c.get("user");
    const checkpoint = await requireThread(ctx.checkpointer, user, threadId, "clear");
    await readBody(c, configBodySchema);
    // The transcript is append-only (message ids and the ledger key on it): clearing resets the
    // state fields and the run position, and keeps the messages.
    // The thread's name is the thread's, not its state's: it stays.
    const name = storedThreadName(checkpoint.values);
    const values = name === null ? {} : { [THREAD_NAME_FIELD]: name };
    const version = await editThread(ctx, user, threadId, checkpoint, { values, reset: true });
    return ok(c, { success: true, message: "State cleared successfully", data: { version } });
  });
}

/** The caller's threads only; without auth there are no owners. */
function ownerFilter(user: AuthUser): { userId?: string } {
  return user.authenticated ? { userId: user.id } : {};
}

/**
 * One page of the listing `filter` selects, as `ThreadInfo`s. Searching filters ids and names
 * after going through all of the listing's threads.
 */
async function threadPage(
  ctx: ServerContext,
  filter: { userId?: string; parentThreadId?: string },
  query: { search?: string | undefined; offset: number; limit: number },
): Promise<ReturnType<typeof threadInfo>[]> {
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
  ctx: ServerContext,
  threads: ThreadSummary[],
): Promise<(ThreadSummary | ThreadCheckpoint)[]> {
  const checkpoints = await Promise.all(
    threads.map((t) => ctx.checkpointer.getCheckpoint(t.threadId)),
  );
  return threads.map((t, i) => checkpoints[i] ?? t);
}

/** True when the thread's id or name contains `search`. */
function matches(thread: ReturnType<typeof threadInfo>, search: string): boolean {
  return thread.thread_id.includes(search) || (thread.thread_name ?? "").includes(search);
}
