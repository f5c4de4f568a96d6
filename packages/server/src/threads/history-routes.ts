import type { Hono } from "hono";
import { ok } from "../http/envelope.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import type { ServerContext } from "../http/server-context.js";
import type { ServerEnv } from "../http/server-env.js";
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
export function threadHistoryRoutes(app: Hono<ServerEnv>, ctx: ServerContext): void {
  app.get("/v1/threads/:thread_id/history", async (c) => {
    const threadId = pathId(c, "thread_id");
    await requireThread(ctx.checkpointer, c.get("user"), threadId, "read");
    const { limit, before } = readQuery(c, historyQuerySchema);
    const page = before === undefined ? { limit } : { limit, before };
    const history = await ctx.graph.getStateHistory({ threadId }, page);
    return ok(c, { history: history.map(wireHistoryEntry) });
  });

  app.post("/v1/threads/:thread_id/state/update", async (c) => {
    const threadId = pathId(c, "thread_id");
    const user = c.get("user");
    const checkpoint = await requireThread(ctx.checkpointer, user, threadId, "write");
    refuseSubgraphThread(checkpoint, "be updated");
    const body = await readBody(c, updateStateSchema);
    const version = await updateThreadState(ctx, user, checkpoint, body);
    const state = await ctx.graph.getState({ threadId, version });
    return ok(c, { version, state: state ? toWireState(threadId, state) : null });
  });

  app.post("/v1/threads/:thread_id/history/prune", async (c) => {
    const threadId = pathId(c, "thread_id");
    await requireThread(ctx.checkpointer, c.get("user"), threadId, "prune");
    const { keep_last: keepLast } = await readBody(c, pruneHistorySchema);
    const deleted = await ctx.graph.pruneHistory({ threadId }, { keepLast });
    return ok(c, { deleted_versions: deleted });
  });

  app.put("/v1/threads/:thread_id/delete-after", async (c) => {
    const threadId = pathId(c, "thread_id");
    await requireThread(ctx.checkpointer, c.get("user"), threadId, "delete");
    const { delete_after: at } = await readBody(c, deleteAfterSchema);
    await ctx.graph.setDeleteAfter({ threadId }, at === null ? null : new Date(at));
    return ok(c, { thread_id: threadId, delete_after: at });
  });
}
