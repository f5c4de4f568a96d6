import type { Route } from "../http/route-table.js";
import {
  stateResponse,
  threadDataResponse,
  threadDeletedResponse,
  threadListResponse,
  versionDoneResponse,
} from "../wire/response-schemas.js";
import type { ThreadsContext } from "./threads-context.js";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import {
  configBodySchema,
  pageQuerySchema,
  putStateSchema,
  stateQuerySchema,
} from "../wire/request-schemas.js";
import { threadInfo } from "../wire/wire-thread.js";
import { toWireState } from "../wire/wire-state.js";
import { authorizeThread, requireThread } from "./ownership.js";
import { clearThreadState, putThreadState } from "./thread-edits.js";
import { ownerFilter, threadPage } from "./thread-listing.js";

/**
 * Threads: list (the caller's top-level threads only: a subgraph's threads are its parent's),
 * a thread's child threads, details, state get/put/clear, delete (with the thread's child threads).
 */
export const threadRoutes: Route<ThreadsContext>[] = [
  {
    method: "get",
    path: "/v1/threads",
    summary: "The caller's threads, without subgraphs' child threads",
    responses: {
      200: { description: "The user's threads", schema: threadListResponse },
    },
    query: pageQuerySchema,
    handler: async (c, ctx) => {
      const query = readQuery(c, pageQuerySchema);
      return ok(c, { threads: await threadPage(ctx, ownerFilter(c.get("user")), query) });
    },
  },
  {
    method: "get",
    path: "/v1/threads/{thread_id}/children",
    summary: "The thread's child threads (its subgraphs' threads)",
    responses: {
      200: { description: "The thread's subgraph threads", schema: threadListResponse },
    },
    query: pageQuerySchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const user = c.get("user");
      await requireThread(ctx.checkpointer, user, threadId, "read");
      const query = readQuery(c, pageQuerySchema);
      const filter = { ...ownerFilter(user), parentThreadId: threadId };
      return ok(c, { threads: await threadPage(ctx, filter, query) });
    },
  },
  {
    method: "get",
    path: "/v1/threads/{thread_id}",
    summary: "Thread details",
    responses: {
      200: { description: "The thread, or null", schema: threadDataResponse },
    },
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const checkpoint = await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "read");
      const thread = checkpoint ? threadInfo(checkpoint) : null;
      return ok(c, { thread_data: { thread } });
    },
  },
  {
    method: "delete",
    path: "/v1/threads/{thread_id}",
    summary: "Delete the thread, its messages and ledger",
    responses: {
      200: { description: "Deleted", schema: threadDeletedResponse },
    },
    body: configBodySchema,
    handler: async (c, ctx) => {
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
    },
  },
  {
    method: "get",
    path: "/v1/threads/{thread_id}/state",
    summary: "The thread's state: the latest version, or ?version",
    responses: {
      200: { description: "The thread's state, or null", schema: stateResponse },
    },
    query: stateQuerySchema,
    handler: async (c, ctx) => {
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
    },
  },
  {
    method: "put",
    path: "/v1/threads/{thread_id}/state",
    summary: "Merge into the thread's state",
    responses: {
      200: { description: "The state after the merge", schema: stateResponse },
    },
    body: putStateSchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const user = c.get("user");
      const checkpoint = await authorizeThread(ctx.checkpointer, user, threadId, "write");
      const body = await readBody(c, putStateSchema);
      await putThreadState(ctx, user, threadId, checkpoint, body.state);
      const state = await ctx.graph.getState({ threadId });
      return ok(c, { state: state ? toWireState(threadId, state) : null });
    },
  },
  {
    method: "delete",
    path: "/v1/threads/{thread_id}/state",
    summary: "Clear the thread's state fields",
    responses: {
      200: { description: "Cleared, at this version", schema: versionDoneResponse },
    },
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const user = c.get("user");
      const checkpoint = await requireThread(ctx.checkpointer, user, threadId, "clear");
      await readBody(c, configBodySchema);
      const version = await clearThreadState(ctx, user, checkpoint);
      return ok(c, { success: true, message: "State cleared successfully", data: { version } });
    },
  },
];
