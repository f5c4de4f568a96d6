import { IN_DOUBT_INTERRUPT_KIND, type Interrupt, type LedgerEntry } from "@tenxgraph/core";
import type { Hono } from "hono";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { requireThread } from "./ownership.js";
import { pathId, readBody } from "../http/request-input.js";
import { inDoubtDecisionBodySchema } from "../wire/request-schemas.js";
import { track, type ServerContext } from "../http/server-context.js";
import type { ServerEnv } from "../http/server-env.js";
import { refuseSubgraphThread } from "./subgraph-threads.js";
import { toWireMessage } from "../wire/convert-message.js";

/** What an in-doubt interrupt asks about the call. */
interface InDoubtQuestion {
  kind: string;
  tool: string;
  arguments: unknown;
  key: string;
  attempt: number;
}

/** Beyond 10xGraph: the tool ledger, in-doubt calls, and the decision on one. */
export function ledgerRoutes(app: Hono<ServerEnv>, ctx: ServerContext): void {
  app.get("/v1/threads/:thread_id/ledger", async (c) => {
    const threadId = pathId(c, "thread_id");
    await requireThread(ctx.checkpointer, c.get("user"), threadId, "read");
    const entries = await ctx.graph.getToolLedger({ threadId });
    return ok(c, { entries: entries.map(ledgerEntryJson) });
  });

  app.get("/v1/threads/:thread_id/in-doubt", async (c) => {
    const threadId = pathId(c, "thread_id");
    const checkpoint = await requireThread(ctx.checkpointer, c.get("user"), threadId, "read");
    const asked =
      checkpoint.status === "interrupted" ? inDoubtInterrupts(checkpoint.interrupts) : [];
    const calls: Record<string, unknown>[] = asked.map(({ id, question }) => ({
      key: question.key,
      tool_name: question.tool,
      arguments: question.arguments,
      attempt: question.attempt,
      interrupt_id: id,
      decidable: true,
    }));
    // Started, never recorded: in doubt once their run is gone. The tool's policy decides when
    // the run continues; only calls whose policy is "interrupt" wait for a decision here.
    const asking = new Set(asked.map(({ question }) => question.key));
    for (const entry of await ctx.graph.getToolLedger({ threadId })) {
      if (entry.status !== "started" || asking.has(entry.key)) continue;
      calls.push({ ...ledgerEntryJson(entry), interrupt_id: null, decidable: false });
    }
    return ok(c, { calls });
  });

  app.post("/v1/threads/:thread_id/in-doubt/:key", async (c) => {
    const threadId = pathId(c, "thread_id");
    const key = pathId(c, "key");
    const user = c.get("user");
    // Ownership before the body: another user learns nothing about the thread, not even
    // whether their body would have been valid.
    const checkpoint = await requireThread(ctx.checkpointer, user, threadId, "decide on");
    // The decision runs the served graph, which is not a subgraph's: its parent decides.
    refuseSubgraphThread(checkpoint, "have an in-doubt call decided");
    const decision = await readBody(c, inDoubtDecisionBodySchema);
    const pending =
      checkpoint.status === "interrupted" ? inDoubtInterrupts(checkpoint.interrupts) : [];
    const asked = pending.find((p) => p.question.key === key);
    if (!asked) {
      throw new ApiError(
        404,
        "NOT_FOUND",
        `No in-doubt call '${key}' waits for a decision on thread '${threadId}'`,
      );
    }
    const before = checkpoint.messageCount;
    const result = await track(
      ctx,
      ctx.graph.invoke(
        { resume: decision, interruptId: asked.id },
        // The run starts from the checkpoint read here: one read of the thread per decision.
        { threadId, userId: user.id, loadedCheckpoint: checkpoint },
      ),
    );
    return ok(c, {
      messages: result.state.messages.slice(before).map(toWireMessage),
      meta: {
        thread_id: threadId,
        run_id: result.runId,
        status: result.status,
        version: result.version,
        interrupts: result.interrupts,
      },
    });
  });
}

function inDoubtInterrupts(interrupts: Interrupt[]): { id: string; question: InDoubtQuestion }[] {
  return interrupts.flatMap((i) => {
    const value = i.value as Partial<InDoubtQuestion> | null;
    return value?.kind === IN_DOUBT_INTERRUPT_KIND
      ? [{ id: i.id, question: value as InDoubtQuestion }]
      : [];
  });
}

/** A ledger entry in the wire's snake_case. */
function ledgerEntryJson(entry: LedgerEntry) {
  return {
    key: entry.key,
    tool_name: entry.toolName,
    status: entry.status,
    attempt: entry.attempt,
    owner_run_id: entry.ownerRunId,
    started_at: entry.startedAt,
    ...(entry.status === "completed"
      ? { result: entry.result, completed_at: entry.completedAt }
      : {}),
    ...(entry.status === "started"
      ? {
          heartbeat_at: entry.heartbeatAt,
          lease_expires_at: entry.leaseExpiresAt,
          lease_expires_in_ms: entry.leaseExpiresInMs,
        }
      : {}),
  };
}
