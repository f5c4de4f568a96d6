import type { InDoubtCall, InDoubtDecision, InDoubtDecisionResult } from "@tenxgraph/client";
import { IN_DOUBT_INTERRUPT_KIND, type Interrupt } from "@tenxgraph/core";
import { invokeAsHost } from "@tenxgraph/core/host";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import type { ExistingThreadRead } from "./ownership.js";
import { ApiError } from "../http/api-error.js";
import { track } from "../http/shutdown.js";
import type { ThreadsContext } from "./threads-context.js";
import type { AuthUser } from "../http/server-env.js";
import { toWireMessage } from "../wire/convert-message.js";
import { toWireLedgerEntry } from "../wire/wire-ledger.js";

/** What an in-doubt interrupt asks about the call. */
interface InDoubtQuestion {
  kind: string;
  tool: string;
  arguments: unknown;
  key: string;
  attempt: number;
}

/**
 * The thread's calls that may or may not have taken effect: those an in-doubt interrupt asks
 * about (decidable), then those started and never recorded, whose tool's policy decides when
 * the run continues (only calls whose policy is "interrupt" wait for a decision here).
 */
export async function inDoubtCalls(
  ctx: ThreadsContext,
  checkpoint: ThreadCheckpoint,
): Promise<InDoubtCall[]> {
  const asked = askedCalls(checkpoint);
  const calls: InDoubtCall[] = asked.map(({ id, question }) => ({
    key: question.key,
    tool_name: question.tool,
    arguments: question.arguments,
    attempt: question.attempt,
    interrupt_id: id,
    decidable: true,
  }));
  const asking = new Set(asked.map(({ question }) => question.key));
  for (const entry of await ctx.graph.getToolLedger({ threadId: checkpoint.threadId })) {
    if (entry.status !== "started" || asking.has(entry.key)) continue;
    const wire = toWireLedgerEntry(entry) as InDoubtCall & { status: "started" };
    calls.push({ ...wire, interrupt_id: null, decidable: false });
  }
  return calls;
}

/**
 * Carries out `decision` on the in-doubt call `key` by resuming the thread's run (404 when no
 * in-doubt interrupt asks about that call). The run starts from `read`, the caller's read of
 * the thread: one read per decision.
 */
export async function decideInDoubt(
  ctx: ThreadsContext,
  user: AuthUser,
  read: ExistingThreadRead,
  key: string,
  decision: InDoubtDecision,
): Promise<InDoubtDecisionResult> {
  const { checkpoint } = read;
  const { threadId } = checkpoint;
  const asked = askedCalls(checkpoint).find((p) => p.question.key === key);
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
    invokeAsHost(
      ctx.graph,
      { resume: decision, interruptId: asked.id },
      { threadId, userId: user.id },
      { loadedThread: read, graphId: ctx.graphId },
    ),
  );
  return {
    messages: result.state.messages.slice(before).map(toWireMessage),
    meta: {
      thread_id: threadId,
      run_id: result.runId,
      status: result.status,
      version: result.version,
      interrupts: result.interrupts,
    },
  };
}

/** The in-doubt interrupts of a thread paused on them. */
function askedCalls(checkpoint: ThreadCheckpoint): { id: string; question: InDoubtQuestion }[] {
  if (checkpoint.status !== "interrupted") return [];
  return checkpoint.interrupts.flatMap((i: Interrupt) => {
    const value = i.value as Partial<InDoubtQuestion> | null;
    return value?.kind === IN_DOUBT_INTERRUPT_KIND
      ? [{ id: i.id, question: value as InDoubtQuestion }]
      : [];
  });
}
