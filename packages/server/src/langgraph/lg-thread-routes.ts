import { z } from "zod";
import { readBody } from "../http/request-input.js";
import { lgJson, lgRoutes } from "./lg-http.js";
import { lgThread } from "./lg-state.js";
import {
  copyLgThread,
  createLgThread,
  graphOfThread,
  patchLgThread,
  requireLgThread,
  searchLgThreads,
  threadCreateSchema,
  threadSearchSchema,
} from "./lg-threads.js";

const threadAnswer = {
  200: { description: "The thread (LangGraph's Thread)", schema: z.unknown() },
};
const patchSchema = z.looseObject({ metadata: z.record(z.string(), z.unknown()).nullish() });

/** LangGraph's threads: create, get, patch, delete, search, count. */
export const lgThreadRoutes = lgRoutes([
  {
    method: "post",
    path: "/threads",
    summary: "Create a thread (LangGraph)",
    body: threadCreateSchema,
    responses: threadAnswer,
    handler: async (c, ctx) => {
      const body = await readBody(c, threadCreateSchema);
      const checkpoint = await createLgThread(ctx, c.get("user"), body);
      return c.json(await lgThread(graphOfThread(ctx, checkpoint), checkpoint));
    },
  },
  {
    method: "post",
    path: "/threads/search",
    summary: "Search the caller's threads (LangGraph)",
    body: threadSearchSchema,
    responses: lgJson("Threads", z.array(z.looseObject({}))),
    handler: async (c, ctx) => {
      const query = await readBody(c, threadSearchSchema);
      return c.json(await searchLgThreads(ctx, c.get("user"), query));
    },
  },
  {
    method: "post",
    path: "/threads/count",
    summary: "Count the caller's matching threads (LangGraph)",
    body: threadSearchSchema,
    responses: lgJson("How many", z.number()),
    handler: async (c, ctx) => {
      const query = await readBody(c, threadSearchSchema);
      const all = await searchLgThreads(ctx, c.get("user"), {
        ...query,
        limit: 1_000_000,
        offset: 0,
      });
      return c.json(all.length);
    },
  },
  {
    method: "post",
    path: "/threads/{thread_id}/copy",
    summary: "Copy a thread with its history and tool ledger (LangGraph)",
    responses: threadAnswer,
    handler: async (c, ctx) => {
      const copy = await copyLgThread(ctx, c.get("user"), c.req.param("thread_id")!);
      return c.json(await lgThread(graphOfThread(ctx, copy), copy));
    },
  },
  {
    method: "get",
    path: "/threads/{thread_id}",
    summary: "Get a thread (LangGraph)",
    responses: threadAnswer,
    handler: async (c, ctx) => {
      const checkpoint = await requireLgThread(
        ctx,
        c.get("user"),
        c.req.param("thread_id")!,
        "read",
      );
      return c.json(await lgThread(graphOfThread(ctx, checkpoint), checkpoint));
    },
  },
  {
    method: "patch",
    path: "/threads/{thread_id}",
    summary: "Merge metadata into a thread (LangGraph)",
    body: patchSchema,
    responses: threadAnswer,
    handler: async (c, ctx) => {
      const user = c.get("user");
      const threadId = c.req.param("thread_id")!;
      const checkpoint = await requireLgThread(ctx, user, threadId, "update");
      const body = await readBody(c, patchSchema);
      await patchLgThread(ctx, user, checkpoint, body.metadata ?? {});
      const updated = (await ctx.checkpointer.getCheckpoint(threadId))!;
      return c.json(await lgThread(graphOfThread(ctx, updated), updated));
    },
  },
  {
    method: "delete",
    path: "/threads/{thread_id}",
    summary: "Delete a thread, its runs, messages and ledger (LangGraph)",
    responses: { 204: { description: "Deleted", schema: z.null(), body: "json" } },
    handler: async (c, ctx) => {
      const threadId = c.req.param("thread_id")!;
      await requireLgThread(ctx, c.get("user"), threadId, "delete");
      // Its runs first: a queued one would otherwise re-create the thread.
      await ctx.runs?.store.deleteThreadRuns(threadId);
      await ctx.graph.deleteThread({ threadId });
      return c.body(null, 204);
    },
  },
]);
