import {
  isClientError,
  type InDoubtCall,
  type LedgerEntry,
  type TenxgraphClient,
  type ThreadInfo,
  type WireState,
} from "@tenxgraph/client";

/** What the thread page shows of a thread, read together. */
export interface ThreadData {
  name: string | null;
  /** The thread this one is a subgraph's thread of; `null` for a top-level thread. */
  parentThreadId: string | null;
  /** `null` for a thread nobody wrote to yet. */
  state: WireState | null;
  ledger: LedgerEntry[];
  inDoubt: InDoubtCall[];
  /** The threads its subgraph nodes ran on (the first page of them). */
  children: ThreadInfo[];
}

/**
 * Everything the page shows of a thread. A thread nobody wrote to yet has no state; its ledger
 * and in-doubt routes answer 404, which here means "nothing yet".
 */
export async function readThread(
  client: TenxgraphClient,
  threadId: string,
  signal: AbortSignal,
): Promise<ThreadData> {
  const thread = await client.getThread(threadId, { signal });
  if (thread === null) {
    return { name: null, parentThreadId: null, state: null, ledger: [], inDoubt: [], children: [] };
  }
  const [state, ledger, inDoubt, children] = await Promise.all([
    client.getState(threadId, { signal }),
    client.getLedger(threadId, { signal }).catch(emptyWhenMissing),
    client.listInDoubt(threadId, { signal }).catch(emptyWhenMissing),
    client.listChildThreads(threadId, { signal }).catch(emptyWhenMissing),
  ]);
  const parentThreadId = thread.parent_thread_id;
  return { name: thread.thread_name, parentThreadId, state, ledger, inDoubt, children };
}

function emptyWhenMissing(error: unknown): never[] {
  if (isClientError(error) && error.status === 404) return [];
  throw error;
}
