import { Message } from "@tenxgraph/core";
import type { CheckpointWrite, Checkpointer } from "@tenxgraph/core/storage";
import { openStore } from "../../support/store-spec.js";
import type { StoreSpec } from "../../support/store-spec.js";

/**
 * The calls of a seeded thread: the scripted model asked for both in one message. (Here, not
 * in the worker script, because importing a worker script would run it.)
 */
export const PENDING_CALLS = [
  { name: "slow_a", tag: "seed" },
  { name: "slow_b", tag: "seed" },
];

/**
 * `claimStaleAfterMs` of the processes that continue seeded threads. They heartbeat every
 * 100 ms, so this is far above any pause of a live worker's event loop here: live claims are
 * never taken for dead ones, and a dead run's claim is stale soon after it is seeded.
 */
export const CLAIM_STALE_AFTER_MS = 2000;

/** The calls a seeded thread waits on. */
export interface SeededCalls {
  /** Ledger keys of the pending calls, in the order of the assistant message. */
  keys: string[];
  /** Versions the seed committed (1 and 2). */
  versions: number[];
}

/**
 * Writes, through the store, what a process killed inside the tool node leaves behind: the
 * run's start write (the user's message), its model step (an assistant message asking for
 * `calls`, the thread `running` at `TOOL`), and, for each index in `claimedByDeadRun`, a claim
 * of that call held by a run that is gone (its lease expires soon after, with no heartbeat).
 */
export async function seedPendingCalls(
  spec: StoreSpec,
  threadId: string,
  calls: readonly { name: string; tag: string }[],
  claimedByDeadRun: readonly number[] = [],
): Promise<SeededCalls> {
  const store = openStore(spec);
  try {
    const user = Message.user("charge order 4821 and email me");
    const toolCalls = calls.map((call, i) => ({
      id: `call_${i + 1}`,
      name: call.name,
      arguments: JSON.stringify({ tag: call.tag }),
    }));
    const assistant = Message.assistant("", toolCalls);
    const versions = [
      await put(store, { threadId, expectedVersion: 0, step: 0, currentNode: "MAIN" }, [user]),
      await put(store, { threadId, expectedVersion: 1, step: 1, currentNode: "TOOL" }, [assistant]),
    ];
    const keys = toolCalls.map((call) => `${assistant.id}:${call.id}`);
    const claims = claimedByDeadRun.map((index) => ({
      key: keys[index]!,
      toolName: calls[index]!.name,
      ownerRunId: "dead-run",
      // The dead run had the settings of the processes that continue: its lease is theirs.
      leaseMs: CLAIM_STALE_AFTER_MS,
      expectedAttempt: 0,
    }));
    if (claims.length > 0) await store.claimCalls(threadId, claims);
    return { keys, versions };
  } finally {
    await store.close();
  }
}

function put(
  store: Checkpointer,
  at: Pick<CheckpointWrite, "threadId" | "expectedVersion" | "step" | "currentNode">,
  newMessages: Message[],
): Promise<number> {
  return store.putCheckpoint({
    ...at,
    incarnation: "first-life",
    userId: null,
    status: "running",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    newMessages,
  });
}
