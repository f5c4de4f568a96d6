import type { LedgerEntry, ThreadCheckpoint } from "@tenxgraph/core/storage";
import type { Message } from "@tenxgraph/core";
import { openStore } from "../../support/store-spec.js";
import type { StoreSpec } from "../../support/store-spec.js";

/** A thread as the store holds it after the processes are done with it. */
export interface StoredThread {
  checkpoint: ThreadCheckpoint | null;
  messages: Message[];
  ledger: LedgerEntry[];
}

/** Reads a thread through a connection of the test's own: what any later process would see. */
export async function readThread(spec: StoreSpec, threadId: string): Promise<StoredThread> {
  const store = openStore(spec);
  try {
    return {
      checkpoint: await store.getCheckpoint(threadId),
      messages: await store.listMessages(threadId),
      ledger: await store.listCalls(threadId),
    };
  } finally {
    await store.close();
  }
}

/** The ledger key of every tool call the transcript's assistant messages made. */
export function toolCallKeys(messages: readonly Message[]): string[] {
  return messages.flatMap((message) =>
    message.role === "assistant"
      ? (message.toolCalls ?? []).map((call) => `${message.id}:${call.id}`)
      : [],
  );
}

/**
 * The ledger key each tool message answers, found through the assistant message before it
 * that made a call with its id (providers reuse call ids, so the nearest one is meant).
 */
export function answeredKeys(messages: readonly Message[]): string[] {
  const keys: string[] = [];
  let caller: Message | undefined;
  for (const message of messages) {
    if (message.role === "assistant") caller = message;
    if (message.role === "tool") keys.push(`${caller?.id}:${message.toolCallId}`);
  }
  return keys;
}

/** Values that occur more than once in `values`. */
export function duplicates<T>(values: readonly T[]): T[] {
  const seen = new Set<T>();
  const repeated = new Set<T>();
  for (const value of values) {
    if (seen.has(value)) repeated.add(value);
    seen.add(value);
  }
  return [...repeated];
}
