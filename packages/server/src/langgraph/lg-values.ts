import type { Interrupt, Message } from "@tenxgraph/core";
import type { LedgerEntry } from "@tenxgraph/core/storage";
import { LG_THREAD_FIELD, THREAD_NAME_FIELD } from "../wire/thread-name-field.js";
import { toLcMessage, type LcMessage } from "@tenxgraph/core/interop";

export { LG_THREAD_FIELD };

/** What {@link LG_THREAD_FIELD} holds. */
export interface LgThreadRecord {
  metadata: Record<string, unknown>;
  created_at: string;
}

/** Fields of ours that are no part of the state a LangGraph client reads or writes. */
export const HIDDEN_FIELDS: ReadonlySet<string> = new Set([LG_THREAD_FIELD, THREAD_NAME_FIELD]);

/** The thread's LangGraph record from its stored values (an empty one for a /v1 thread). */
export function lgThreadRecord(
  values: Record<string, unknown>,
  fallbackTime: string,
): LgThreadRecord {
  const stored = values[LG_THREAD_FIELD] as Partial<LgThreadRecord> | undefined;
  return {
    metadata: stored?.metadata ?? {},
    created_at: stored?.created_at ?? fallbackTime,
  };
}

/** An interrupt as LangGraph's `Interrupt`: `{ id, value }`, plus where it waits. */
export function lgInterrupt(interrupt: Interrupt) {
  return {
    id: interrupt.id,
    value: interrupt.value,
    ...(interrupt.message === undefined ? {} : { message: interrupt.message }),
    when: "during",
    resumable: true,
    ns: [`${interrupt.node}:${interrupt.id}`],
  };
}

/**
 * The ledger's state of each tool call, by tool call id, for the default key
 * (`<assistant message id>:<tool call id>`): what `response_metadata.tenxgraph` carries.
 */
export type LedgerByCall = Map<string, LedgerEntry>;

/** The ledger entries of `messages`' tool calls, by tool call id. */
export function ledgerByCall(messages: readonly Message[], ledger: LedgerEntry[]): LedgerByCall {
  const byKey = new Map(ledger.map((entry) => [entry.key, entry]));
  const found: LedgerByCall = new Map();
  for (const message of messages) {
    for (const call of message.role === "assistant" ? (message.toolCalls ?? []) : []) {
      const entry = byKey.get(`${message.id}:${call.id}`);
      if (entry) found.set(call.id, entry);
    }
  }
  return found;
}

/** A ledger entry as the metadata a LangGraph client passes through. */
function ledgerMetadata(entry: LedgerEntry) {
  return {
    ledger_key: entry.key,
    ledger_status: entry.status,
    attempt: entry.attempt,
    in_doubt: entry.status === "started" && entry.leaseExpiresInMs < 0,
  };
}

/** A message for a LangGraph client, with its tool calls' ledger state in its metadata. */
export function lcMessageWithLedger(message: Message, ledger?: LedgerByCall): LcMessage {
  const lc = toLcMessage(message);
  if (!ledger) return lc;
  if (message.role === "tool") {
    const entry = ledger.get(message.toolCallId);
    if (entry) lc.response_metadata = { ...lc.response_metadata, tenxgraph: ledgerMetadata(entry) };
  } else if (message.role === "assistant" && message.toolCalls?.length) {
    const calls = Object.fromEntries(
      message.toolCalls.flatMap((c) => {
        const entry = ledger.get(c.id);
        return entry ? [[c.id, ledgerMetadata(entry)]] : [];
      }),
    );
    if (Object.keys(calls).length > 0)
      lc.response_metadata = { ...lc.response_metadata, tenxgraph: { tool_calls: calls } };
  }
  return lc;
}

/** True for one of our messages (what a node's update or the transcript holds). */
export function isMessage(value: unknown): value is Message {
  const v = value as { id?: unknown; role?: unknown } | null;
  return (
    typeof v === "object" && v !== null && typeof v.id === "string" && typeof v.role === "string"
  );
}

/** The state as LangGraph's clients read it: our hidden fields out, messages LangChain's. */
export function lgValues(
  values: Record<string, unknown>,
  ledger?: LedgerByCall,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (HIDDEN_FIELDS.has(key)) continue;
    out[key] = key === "messages" && Array.isArray(value) ? lgMessages(value, ledger) : value;
  }
  return out;
}

/** A node's update as LangGraph's `updates` mode shows it: messages LangChain's. */
export function lgUpdate(update: unknown): unknown {
  if (isMessage(update)) return { messages: [toLcMessage(update)] };
  if (Array.isArray(update) && update.every(isMessage)) return { messages: lgMessages(update) };
  if (typeof update !== "object" || update === null) return update;
  return lgValues(update as Record<string, unknown>);
}

function lgMessages(list: unknown[], ledger?: LedgerByCall): unknown[] {
  return list.map((m) => (isMessage(m) ? lcMessageWithLedger(m, ledger) : m));
}

/** A token delta as LangChain's `AIMessageChunk` (or the text so far, as `ai`, for partials). */
export function aiChunk(id: string, content: string, type = "AIMessageChunk") {
  return {
    type,
    id,
    content,
    tool_calls: [],
    tool_call_chunks: [],
    invalid_tool_calls: [],
    additional_kwargs: {},
    response_metadata: {},
  };
}
