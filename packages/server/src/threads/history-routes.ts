import type { Route } from "../http/route-table.js";
import {
  deleteAfterResponse,
  historyResponse,
  pruneResponse,
  stateUpdateResponse,
} from "../wire/response-schemas.js";
import type { ThreadsContext } from "./threads-context.js";
import { ok } from "../http/envelope.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import {
  deleteAfterSchema,
  historyQuerySchema,
  pruneHistorySchema,
  updateStateSchema,
} from "../wire/request-schemas.js";
import { wireHistoryEntry } from "../wire/wire-history.js";
import { toWireState } from "../wire/wire-state.js";
import { requireThread } from "./ownership.js";
import { refuseSubgraphThread } from "./subgraph-threads.js";
import { updateThreadState } from "./thread-edits.js";

/**
 * Beyond 10xGraph: a thread's history (its versions, newest first), edits through the graph's
 * reducers (`updateState`), pruning, and a delete-after time. Forks are runs with
 * `config.from_version`; a past version's state is `GET …/state?version=N`.
 */
export const threadHistoryRoutes: Route<ThreadsContext>[] = [
  {
    method: "get",
    path: "/v1/threads/{thread_id}/history",
    summary: "The thread's versions, newest first (before a version)",
    responses: {
      200: { description: "The thread's versions, newest first", schema: historyResponse },
    },
    query: historyQuerySchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      await requireThread(ctx.checkpointer, c.get("user"), threadId, "read");
      const { limit, before } = readQuery(c, historyQuerySchema);
      const page = before === undefined ? { limit } : { limit, before };
      const history = await ctx.graph.getStateHistory({ threadId }, page);
      return ok(c, { history: history.map(wireHistoryEntry) });
    },
  },
  {
    method: "post",
    path: "/v1/threads/{thread_id}/state/update",
    summary: "Update the state through the graph's reducers (updateState), optionally as a node",
    responses: {
      200: { description: "The new version and its state", schema: stateUpdateResponse },
    },
    body: updateStateSchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const user = c.get("user");
      const checkpoint = await requireThread(ctx.checkpointer, user, threadId, "write");
      refuseSubgraphThread(checkpoint, "be updated");
      const body = await readBody(c, updateStateSchema);
      const version = await updateThreadState(ctx, user, checkpoint, body);
      const state = await ctx.graph.getState({ threadId, version });
      return ok(c, { version, state: state ? toWireState(threadId, state) : null });
    },
  },
  {
    method: "post",
    path: "/v1/threads/{thread_id}/history/prune",
    summary: "Delete all but the newest keep_last versions",
    responses: {
      200: { description: "How many versions were deleted", schema: pruneResponse },
    },
    body: pruneHistorySchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      await requireThread(ctx.checkpointer, c.get("user"), threadId, "prune");
      const { keep_last: keepLast } = await readBody(c, pruneHistorySchema);
      const deleted = await ctx.graph.pruneHistory({ threadId }, { keepLast });
      return ok(c, { deleted_versions: deleted });
    },
  },
  {
    method: "put",
    path: "/v1/threads/{thread_id}/delete-after",
    summary: "Delete the thread once this time has passed (null keeps it)",
    responses: {
      200: { description: "The deletion time set", schema: deleteAfterResponse },
    },
    body: deleteAfterSchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      await requireThread(ctx.checkpointer, c.get("user"), threadId, "delete");
      const { delete_after: at } = await readBody(c, deleteAfterSchema);
      await ctx.graph.setDeleteAfter({ threadId }, at === null ? null : new Date(at));
      return ok(c, { thread_id: threadId, delete_after: at });
    },
  },
];
