import { z } from "zod";
import type { BaseState, CompiledGraph } from "@tenxgraph/core";
import { ApiError } from "../http/api-error.js";
import { readBody } from "../http/request-input.js";
import { refusePrivilegedEdit } from "../threads/state-edit-policy.js";
import { refuseSubgraphThread } from "../threads/subgraph-threads.js";
import { lgJson, lgRoutes, unsupported } from "./lg-http.js";
import { lgCheckpoint, lgThreadState, versionOf } from "./lg-state.js";
import { graphOfThread, requireLgThread } from "./lg-threads.js";
import { ourUpdate } from "./lg-input.js";

/** A checkpoint reference as LangGraph's clients send it: `{ checkpoint_id }` or a config. */
const checkpointRef = z
  .looseObject({
    checkpoint_id: z.string().nullish(),
    configurable: z.looseObject({ checkpoint_id: z.string().nullish() }).nullish(),
  })
  .nullish();

const updateStateSchema = z.looseObject({
  values: z.union([z.record(z.string(), z.unknown()), z.null()]).optional(),
  as_node: z.string().min(1).nullish(),
  checkpoint: checkpointRef,
  checkpoint_id: z.string().nullish(),
});

const historySchema = z.looseObject({
  limit: z.number().int().min(1).max(1000).default(10),
  before: z.union([checkpointRef, z.string()]).optional(),
  checkpoint: checkpointRef,
  metadata: z.record(z.string(), z.unknown()).nullish(),
});

/** The checkpoint id a reference names, if any. */
function refId(ref: z.infer<typeof checkpointRef> | string | undefined): string | undefined {
  if (typeof ref === "string") return ref;
  return ref?.checkpoint_id ?? ref?.configurable?.checkpoint_id ?? undefined;
}

async function stateAnswer(graph: CompiledGraph<BaseState>, threadId: string, version?: number) {
  const state = await graph.getState(version === undefined ? { threadId } : { threadId, version });
  if (!state)
    throw new ApiError(
      404,
      "NOT_FOUND",
      `Thread '${threadId}' has no checkpoint ${String(version)}`,
    );
  return lgThreadState(graph, threadId, state);
}

/** LangGraph's thread state: get (latest or a checkpoint), update (`as_node`), history. */
export const lgStateRoutes = lgRoutes([
  {
    method: "get",
    path: "/threads/{thread_id}/state",
    summary: "The thread's latest state (LangGraph)",
    responses: lgJson("ThreadState"),
    handler: async (c, ctx) => {
      const threadId = c.req.param("thread_id")!;
      const checkpoint = await requireLgThread(ctx, c.get("user"), threadId, "read");
      return c.json(await stateAnswer(graphOfThread(ctx, checkpoint), threadId));
    },
  },
  {
    method: "get",
    path: "/threads/{thread_id}/state/{checkpoint_id}",
    summary: "The thread's state at a checkpoint (LangGraph)",
    responses: lgJson("ThreadState"),
    handler: async (c, ctx) => {
      const threadId = c.req.param("thread_id")!;
      const checkpoint = await requireLgThread(ctx, c.get("user"), threadId, "read");
      const version = versionOf(c.req.param("checkpoint_id")!, ["path", "checkpoint_id"]);
      return c.json(await stateAnswer(graphOfThread(ctx, checkpoint), threadId, version));
    },
  },
  {
    method: "post",
    path: "/threads/{thread_id}/state/checkpoint",
    summary: "The thread's state at a checkpoint (LangGraph)",
    body: z.looseObject({ checkpoint: checkpointRef }),
    responses: lgJson("ThreadState"),
    handler: async (c, ctx) => {
      const threadId = c.req.param("thread_id")!;
      const checkpoint = await requireLgThread(ctx, c.get("user"), threadId, "read");
      const body = await readBody(c, z.looseObject({ checkpoint: checkpointRef }));
      const id = refId(body.checkpoint);
      const version =
        id === undefined ? undefined : versionOf(id, ["body", "checkpoint", "checkpoint_id"]);
      return c.json(await stateAnswer(graphOfThread(ctx, checkpoint), threadId, version));
    },
  },
  {
    method: "post",
    path: "/threads/{thread_id}/state",
    summary: "Update the thread's state through the reducers, optionally as a node (LangGraph)",
    body: updateStateSchema,
    responses: lgJson("The new checkpoint"),
    handler: async (c, ctx) => {
      const threadId = c.req.param("thread_id")!;
      const user = c.get("user");
      const checkpoint = await requireLgThread(ctx, user, threadId, "write");
      refuseSubgraphThread(checkpoint, "be updated");
      const body = await readBody(c, updateStateSchema);
      const from = refId(body.checkpoint) ?? body.checkpoint_id ?? undefined;
      if (from !== undefined && versionOf(from, ["body", "checkpoint_id"]) !== checkpoint.version)
        throw unsupported(
          ["body", "checkpoint_id"],
          "updates apply to the latest checkpoint only; fork with a run from checkpoint_id",
        );
      const { update, added } = ourUpdate(body.values ?? {});
      const asNode = body.as_node ?? undefined;
      refusePrivilegedEdit(ctx.stateEdits, user, { messages: added, asNode });
      const graph = graphOfThread(ctx, checkpoint);
      const version = await graph.updateState(
        { threadId },
        update,
        asNode === undefined ? {} : { asNode },
      );
      const ref = lgCheckpoint(threadId, version);
      // LangGraph.js answers the new config, its Python server the checkpoint: both, alike.
      return c.json({ checkpoint: ref, configurable: ref });
    },
  },
  {
    method: "post",
    path: "/threads/{thread_id}/history",
    summary: "The thread's checkpoints, newest first (LangGraph)",
    body: historySchema,
    responses: lgJson("ThreadState list", z.array(z.looseObject({}))),
    handler: async (c, ctx) => {
      const threadId = c.req.param("thread_id")!;
      const checkpoint = await requireLgThread(ctx, c.get("user"), threadId, "read");
      const body = await readBody(c, historySchema);
      const before = refId(body.before);
      return c.json(await history(graphOfThread(ctx, checkpoint), threadId, body.limit, before));
    },
  },
  {
    method: "get",
    path: "/threads/{thread_id}/history",
    summary: "The thread's checkpoints, newest first (LangGraph)",
    responses: lgJson("ThreadState list", z.array(z.looseObject({}))),
    handler: async (c, ctx) => {
      const threadId = c.req.param("thread_id")!;
      const checkpoint = await requireLgThread(ctx, c.get("user"), threadId, "read");
      const query = z
        .object({
          limit: z.coerce.number().int().min(1).max(1000).default(10),
          before: z.string().optional(),
        })
        .safeParse(c.req.query());
      if (!query.success) throw unsupported(["query"], query.error.issues[0]!.message);
      return c.json(
        await history(
          graphOfThread(ctx, checkpoint),
          threadId,
          query.data.limit,
          query.data.before,
        ),
      );
    },
  },
]);

/** Each version's whole state (the history lists versions without their transcript). */
async function history(
  graph: CompiledGraph<BaseState>,
  threadId: string,
  limit: number,
  before?: string,
) {
  const page =
    before === undefined ? { limit } : { limit, before: versionOf(before, ["body", "before"]) };
  const versions = await graph.getStateHistory({ threadId }, page);
  const states = await Promise.all(
    versions.map((v) => graph.getState({ threadId, version: v.version })),
  );
  return Promise.all(
    states.flatMap((state) => (state ? [lgThreadState(graph, threadId, state)] : [])),
  );
}
