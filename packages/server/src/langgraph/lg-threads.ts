import { z } from "zod";
import type { BaseState, CompiledGraph } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { uuidv7 } from "@tenxgraph/core/host";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";
import { requireValidId } from "../http/request-limits.js";
import { authorizeThread } from "../threads/ownership.js";
import { refuseSubgraphThread } from "../threads/subgraph-threads.js";
import { editThread } from "../threads/thread-edits.js";
import { ownerFilter } from "../threads/thread-listing.js";
import type { LgContext } from "./lg-context.js";
import { lgThread, lgThreadStatus } from "./lg-state.js";
import { LG_THREAD_FIELD, lgThreadRecord, type LgThreadRecord } from "./lg-values.js";
import { servedGraphOf } from "../wire/thread-name-field.js";

/** `POST /threads`'s body (what the SDK's `threads.create` sends). */
export const threadCreateSchema = z.looseObject({
  thread_id: z.string().min(1).nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  if_exists: z.enum(["raise", "do_nothing"]).nullish(),
  supersteps: z
    .array(z.unknown())
    .max(0, "supersteps are not supported: use threads.updateState")
    .nullish(),
  ttl: z.unknown().optional(),
});

/** `POST /threads/search`'s body. */
export const threadSearchSchema = z.looseObject({
  metadata: z.record(z.string(), z.unknown()).nullish(),
  ids: z.array(z.string()).nullish(),
  status: z.enum(["idle", "busy", "interrupted", "error"]).nullish(),
  values: z.record(z.string(), z.unknown()).nullish(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z
    .enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"])
    .nullish(),
  sort_order: z.enum(["asc", "desc"]).nullish(),
});

/**
 * The graph a thread runs: the one its `graph_id` names, else the default graph (also for a
 * graph id no longer served: LangGraph's routes still read and write such a thread).
 */
export function graphOfThread(
  ctx: LgContext,
  checkpoint: ThreadCheckpoint | null,
): CompiledGraph<BaseState> {
  const { default: graph, defaultId: id, byId } = ctx.graphs;
  if (!checkpoint) return graph;
  return (servedGraphOf(checkpoint.values, { graph, id }, byId) ?? { graph }).graph;
}

/** The thread `user` may read, else a 404 (none) or 403 (another user's). */
export async function requireLgThread(
  ctx: LgContext,
  user: AuthUser,
  threadId: string,
  action: string,
) {
  requireValidId(threadId, ["path", "thread_id"]);
  const checkpoint = await authorizeThread(ctx.checkpointer, user, threadId, action);
  if (checkpoint === null) throw new ApiError(404, "NOT_FOUND", `Thread '${threadId}' not found`);
  return checkpoint;
}

/**
 * Creates the thread as its first version, owned by `user`, holding its LangGraph record
 * (metadata, creation time). A thread that exists is a 409, or itself with `do_nothing`.
 */
export async function createLgThread(
  ctx: LgContext,
  user: AuthUser,
  body: z.infer<typeof threadCreateSchema>,
): Promise<ThreadCheckpoint> {
  const threadId = requireValidId(body.thread_id ?? uuidv7(), ["body", "thread_id"]);
  const existing = await authorizeThread(ctx.checkpointer, user, threadId, "create");
  if (existing) {
    if (body.if_exists === "do_nothing") return existing;
    throw new ApiError(409, "THREAD_EXISTS", `Thread '${threadId}' already exists`);
  }
  const metadata = { ...(body.metadata ?? {}) };
  if (metadata.graph_id === undefined || metadata.graph_id === null) delete metadata.graph_id;
  else if (typeof metadata.graph_id !== "string" || !ctx.graphs.byId.has(metadata.graph_id))
    throw new ApiError(
      422,
      "VALIDATION_ERROR",
      `metadata.graph_id: no graph '${String(metadata.graph_id)}' is served`,
    );
  const record: LgThreadRecord = { metadata, created_at: new Date().toISOString() };
  await editThread(ctx, user, threadId, null, { values: { [LG_THREAD_FIELD]: record } });
  return (await ctx.checkpointer.getCheckpoint(threadId))!;
}

/**
 * `POST /threads/{id}/copy`: a new thread of the caller with the thread's history, metadata and
 * tool ledger, so a run on the copy replays the calls the thread recorded instead of running
 * them again. Refused (409, nothing written) for a subgraph's thread, a thread a background run
 * is running on, and (by the store, in its transaction) a running thread, one with subgraph
 * threads or with calls in doubt.
 */
export async function copyLgThread(
  ctx: LgContext,
  user: AuthUser,
  threadId: string,
): Promise<ThreadCheckpoint> {
  const checkpoint = await requireLgThread(ctx, user, threadId, "copy");
  refuseSubgraphThread(checkpoint, "be copied");
  const runs = (await ctx.runs?.store.listRuns(threadId, { limit: 100, offset: 0 })) ?? [];
  const running = runs.find((run) => run.status === "running");
  if (running) {
    throw new ApiError(
      409,
      "THREAD_BUSY",
      `Thread '${threadId}' has an active run (${running.runId}): copy it once the run has ended`,
    );
  }
  return ctx.checkpointer.copyThread(threadId, uuidv7());
}

/** Merges `metadata` into the thread's record, as its next version. */
export async function patchLgThread(
  ctx: LgContext,
  user: AuthUser,
  checkpoint: ThreadCheckpoint,
  metadata: Record<string, unknown>,
): Promise<void> {
  const record = lgThreadRecord(checkpoint.values, checkpoint.updatedAt);
  const next = { ...record, metadata: { ...record.metadata, ...metadata } };
  await editThread(ctx, user, checkpoint.threadId, checkpoint, {
    values: { ...checkpoint.values, [LG_THREAD_FIELD]: next },
  });
}

/** `POST /threads/search`: the caller's top-level threads that match, sorted and paged. */
export async function searchLgThreads(
  ctx: LgContext,
  user: AuthUser,
  query: z.infer<typeof threadSearchSchema>,
) {
  const summaries = await ctx.checkpointer.listThreads(ownerFilter(user));
  const wanted = query.ids ? new Set(query.ids) : null;
  const checkpoints = await Promise.all(
    summaries
      .filter((s) => !wanted || wanted.has(s.threadId))
      .map((s) => ctx.checkpointer.getCheckpoint(s.threadId)),
  );
  const matching = checkpoints.filter(
    (c): c is ThreadCheckpoint => c !== null && matches(c, query),
  );
  const key = query.sort_by ?? "updated_at";
  const sortKey = (c: ThreadCheckpoint) =>
    key === "thread_id"
      ? c.threadId
      : key === "status"
        ? lgThreadStatus(c.status)
        : key === "created_at"
          ? lgThreadRecord(c.values, c.updatedAt).created_at
          : c.updatedAt;
  matching.sort(
    (a, b) => sortKey(a).localeCompare(sortKey(b)) * (query.sort_order === "asc" ? 1 : -1),
  );
  const page = matching.slice(query.offset, query.offset + query.limit);
  return Promise.all(page.map((c) => lgThread(graphOfThread(ctx, c), c)));
}

function matches(c: ThreadCheckpoint, query: z.infer<typeof threadSearchSchema>): boolean {
  if (query.status && lgThreadStatus(c.status) !== query.status) return false;
  const metadata = lgThreadRecord(c.values, c.updatedAt).metadata;
  for (const [k, v] of Object.entries(query.metadata ?? {}))
    if (JSON.stringify(metadata[k]) !== JSON.stringify(v)) return false;
  for (const [k, v] of Object.entries(query.values ?? {}))
    if (JSON.stringify(c.values[k]) !== JSON.stringify(v)) return false;
  return true;
}
