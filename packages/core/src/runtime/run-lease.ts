import { InvalidRunError } from "../errors/errors.js";
import type { Logger } from "../events/logger.js";
import type { AttemptRef, LedgerEntry, StartedLedgerEntry } from "../storage/ledger-entry.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import { sleep } from "../node/deadline.js";

/**
 * The ledger key of a thread's run lease. Tool calls are keyed `<message id>:<call id>` or by a
 * tool's domain key; this key is reserved for the lease, and `getToolLedger` leaves it out.
 */
export const RUN_LEASE_KEY = "tenxgraph:run-lease";
const RUN_LEASE_OWNER = "tenxgraph:run";
const POLL_MS = 100;

/** What the lease needs from the run's dependencies. */
export interface LeaseDependencies {
  checkpointer: Checkpointer;
  claimStaleAfterMs: number;
  isEndedLocalRun(runId: string): boolean;
}

/**
 * Why a run with `durableCheckpointEveryStep: false` holds a lease: its steps between terminal
 * points are not in the durable store (or only in a cache that may lose them), so another run
 * starting from the store would ask the model again and run new tool calls beside the live
 * ones. The lease is a ledger entry, claimed before the run's start write and heartbeated with
 * its tool claims, so a live run is told from a crashed one exactly as a live tool call is.
 */
export function isHeldLive(
  entry: LedgerEntry | undefined,
  deps: LeaseDependencies,
): entry is StartedLedgerEntry {
  if (entry?.status !== "started") return false;
  if (deps.isEndedLocalRun(entry.ownerRunId)) return false;
  // The holder's own lease, measured by the store's clock, so workers' settings and clocks
  // need not agree.
  return entry.leaseExpiresInMs > 0;
}

/** The lease as it is now, or `undefined` when no run ever held it. */
export async function readLease(
  deps: LeaseDependencies,
  threadId: string,
): Promise<LedgerEntry | undefined> {
  const [entry] = await deps.checkpointer.getCalls(threadId, [RUN_LEASE_KEY]);
  return entry;
}

/**
 * Waits while another run holds the lease: a crashed holder's lease runs out (its own
 * `claimStaleAfterMs` after its last heartbeat), and then the lease is free. Returns `"free"`
 * with the entry once nobody live holds it, or `"changed"` when the holder let it go or another
 * run took it (the thread moved on: read it again). A holder that renews its lease while we
 * wait is live, and so is one whose lease outlives the wait: that is `THREAD_004`, before
 * anything is written.
 */
export async function awaitLease(
  deps: LeaseDependencies,
  threadId: string,
  signal: AbortSignal,
): Promise<{ kind: "free"; entry: LedgerEntry | undefined } | { kind: "changed" }> {
  const held = await readLease(deps, threadId);
  if (!held || !isHeldLive(held, deps)) return { kind: "free", entry: held };
  const giveUpAt = Date.now() + held.leaseExpiresInMs + deps.claimStaleAfterMs;
  for (;;) {
    await sleep(POLL_MS, signal);
    const entry = await readLease(deps, threadId);
    if (entry?.attempt !== held.attempt || entry.status !== "started") return { kind: "changed" };
    if (!isHeldLive(entry, deps)) return { kind: "free", entry };
    const renewed = entry.leaseExpiresAt !== held.leaseExpiresAt;
    if (renewed || Date.now() > giveUpAt) throw liveRunError(threadId, entry);
  }
}

/**
 * Claims the lease for `runId`, taking over the entry seen (`expectedAttempt`, 0 for none). A
 * lost claim means another run took it meanwhile: if that run is live, `THREAD_004`.
 */
export async function claimLease(
  deps: LeaseDependencies,
  threadId: string,
  runId: string,
  expectedAttempt: number,
  after: { committedVersion: number } | null = null,
): Promise<AttemptRef> {
  let expected = expectedAttempt;
  // Twice at most: a first claim from a stale read may meet an entry that is free after all.
  for (let tries = 0; tries < 2; tries++) {
    const [result] = await deps.checkpointer.claimCalls(threadId, [
      {
        key: RUN_LEASE_KEY,
        toolName: RUN_LEASE_OWNER,
        ownerRunId: runId,
        expectedAttempt: expected,
        leaseMs: deps.claimStaleAfterMs,
      },
    ]);
    if (result!.won) return { key: RUN_LEASE_KEY, attempt: result!.attempt };
    const entry = result!.entry;
    if (isHeldLive(entry, deps)) throw liveRunError(threadId, entry, after);
    expected = entry.attempt;
  }
  throw liveRunError(threadId, undefined, after);
}

/**
 * Lets the lease go once the run's terminal write is done (or failed). Fenced by the attempt,
 * so a run whose lease was taken over cannot release its successor's. Best effort: a lease
 * that could not be released goes stale with its heartbeat.
 */
export async function releaseLease(
  deps: LeaseDependencies,
  threadId: string,
  lease: AttemptRef,
  logger: Logger,
): Promise<void> {
  try {
    await deps.checkpointer.completeCall(threadId, lease, { released: true });
  } catch (error) {
    logger.warn(
      { err: error },
      "Could not release the run lease; it counts as free once its heartbeat is stale",
    );
  }
}

/**
 * `after`: this run had created the thread with its start write and lost the lease right
 * after it, so its input is in the thread and the live run carries it on.
 */
function liveRunError(
  threadId: string,
  holder: LedgerEntry | undefined,
  after: { committedVersion: number } | null = null,
): InvalidRunError {
  const who = holder ? `run ${holder.ownerRunId}` : "another run";
  const written = after
    ? `This run's start write (version ${after.committedVersion}) holds its input, which that ` +
      `run carries on: do not send it again`
    : "Nothing of this run was written";
  return new InvalidRunError(
    "THREAD_004",
    `Thread '${threadId}' has a live run (${who}, perhaps in another process) started with ` +
      `durableCheckpointEveryStep: false. Its steps are not in the store, so another run now ` +
      `would repeat its model and tool calls: wait for it to end, or stop it with ` +
      `app.stop({ threadId }), then continue with invoke(null, { threadId }). ${written}`,
  );
}

/**
 * True while a run holds the thread's lease and renews it: a host's check before it starts
 * another run (its "busy thread" answer). A crashed holder's lease runs out: then false.
 */
export async function isRunLeaseHeld(
  checkpointer: Checkpointer,
  threadId: string,
): Promise<boolean> {
  const [entry] = await checkpointer.getCalls(threadId, [RUN_LEASE_KEY]);
  return entry?.status === "started" && entry.leaseExpiresInMs > 0;
}
