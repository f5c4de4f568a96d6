import {
  isClientError,
  type InDoubtCall,
  type LedgerEntry,
  type TenxgraphClient,
  type WireState,
} from "@tenxgraph/client";

/** What the thread page shows of a thread, read together. */
export interface ThreadData {
  name: string | null;
  /** `null` for a thread nobody wrote to yet. */
  state: WireState | null;
  ledger: LedgerEntry[];
  inDoubt: InDoubtCall[];
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
  if (thread === null) return { name: null, state: null, ledger: [], inDoubt: [] };
  const [state, ledger, inDoubt] = await Promise.all([
    client.getState(threadId, { signal }),
    client.getLedger(threadId, { signal }).catch(emptyWhenMissing),
    client.listInDoubt(threadId, { signal }).catch(emptyWhenMissing),
  ]);
  return { name: thread.thread_name, state, ledger, inDoubt };
}

function emptyWhenMissing(error: unknown): never[] {
  if (isClientError(error) && error.status === 404) return [];
  throw error;
}
