import { refuseSubgraphThread } from "./subgraph-threads.js";
import { Message, type BaseState, type StateHistoryEntry } from "@tenxgraph/core";
import type { Hono } from "hono";
import { ok } from "../http/envelope.js";
import { requireThread } from "./ownership.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import { refusePrivilegedEdit } from "./state-edit-policy.js";
import {
  deleteAfterSchema,
  historyQuerySchema,
  pruneHistorySchema,
  updateStateSchema,
} from "../wire/request-schemas.js";
import type { ServerContext } from "../http/server-context.js";
import type { ServerEnv } from "../http/server-env.js";
import { THREAD_NAME_FIELD } from "./thread-name.js";
import { fromWireMessage } from "../wire/convert-message.js";
import { toWireState } from "../wire/wire-state.js";

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
    const checkpoint = await requireThread(ctx.checkpointer, c.get("user"), threadId, "write");
    refuseSubgraphThread(checkpoint, "be updated");
    const body = await readBody(c, updateStateSchema);
    const added = body.messages.map(fromWireMessage);
    refusePrivilegedEdit(ctx.stateEdits, c.get("user"), { messages: added, asNode: body.as_node });
    const update = {
      ...body.values,
      messages: [...body.remove_message_ids.map((id) => Message.remove(id)), ...added],
    };
    const options = body.as_node === undefined ? {} : { asNode: body.as_node };
    const version = await ctx.graph.updateState({ threadId }, update, options);
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

/** A version on the wire: snake_case, without the transcript (it names its message count). */
function wireHistoryEntry(entry: StateHistoryEntry<BaseState>): Record<string, unknown> {
  const { [THREAD_NAME_FIELD]: _name, ...values } = entry.values as Record<string, unknown>;
  return {
    version: entry.version,
    parent_version: entry.parentVersion,
    step: entry.step,
    node: entry.node,
    next_node: entry.nextNode,
    status: entry.status,
    run_id: entry.runId,
    created_at: entry.createdAt,
    values,
    message_count: entry.messageCount,
    interrupts: entry.interrupts,
  };
}
