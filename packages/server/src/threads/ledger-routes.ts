import type { Route } from "../http/route-table.js";
import {
  inDoubtDecisionResponse,
  inDoubtListResponse,
  ledgerResponse,
} from "../wire/response-schemas.js";
import type { ThreadsContext } from "./threads-context.js";
import { ok } from "../http/envelope.js";
import { requireThread, requireThreadRead } from "./ownership.js";
import { pathId, readBody } from "../http/request-input.js";
import { inDoubtDecisionBodySchema } from "../wire/request-schemas.js";
import { refuseSubgraphThread } from "./subgraph-threads.js";
import { toWireLedgerEntry } from "../wire/wire-ledger.js";
import { decideInDoubt, inDoubtCalls } from "./in-doubt.js";

/** Beyond 10xGraph: the tool ledger, in-doubt calls, and the decision on one. */
export const ledgerRoutes: Route<ThreadsContext>[] = [
  {
    method: "get",
    path: "/v1/threads/{thread_id}/ledger",
    summary: "The thread's tool ledger",
    responses: {
      200: { description: "The thread's tool ledger", schema: ledgerResponse },
    },
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      await requireThread(ctx.checkpointer, c.get("user"), threadId, "read");
      const entries = await ctx.graph.getToolLedger({ threadId });
      return ok(c, { entries: entries.map(toWireLedgerEntry) });
    },
  },
  {
    method: "get",
    path: "/v1/threads/{thread_id}/in-doubt",
    summary: "Tool calls that may or may not have taken effect",
    responses: {
      200: { description: "The calls in doubt", schema: inDoubtListResponse },
    },
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const checkpoint = await requireThread(ctx.checkpointer, c.get("user"), threadId, "read");
      return ok(c, { calls: await inDoubtCalls(ctx, checkpoint) });
    },
  },
  {
    method: "post",
    path: "/v1/threads/{thread_id}/in-doubt/{key}",
    summary: "Decide on an in-doubt call: retry, fail, or record a result",
    responses: {
      200: { description: "The run continued after the decision", schema: inDoubtDecisionResponse },
    },
    body: inDoubtDecisionBodySchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const key = pathId(c, "key");
      const user = c.get("user");
      // Ownership before the body: another user learns nothing about the thread, not even
      // whether their body would have been valid.
      const read = await requireThreadRead(ctx.checkpointer, user, threadId, "decide on");
      // The decision runs the served graph, which is not a subgraph's: its parent decides.
      refuseSubgraphThread(read.checkpoint, "have an in-doubt call decided");
      const decision = await readBody(c, inDoubtDecisionBodySchema);
      return ok(c, await decideInDoubt(ctx, user, read, key, decision));
    },
  },
];
