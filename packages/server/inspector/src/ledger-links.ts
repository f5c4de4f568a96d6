import type { LedgerEntry, WireMessage } from "@tenxgraph/client";

/** A tool call the model made, as the transcript has it. */
export interface TranscriptCall {
  messageId: string;
  callId: string;
  name: string;
  arguments: string;
}

/** What the ledger shows of a recorded result (`{ __kind__, value, origin?, errorCode? }`). */
interface RecordedResult {
  origin?: string;
  errorCode?: string;
  value?: { isError?: boolean };
}

/** The tool calls of a transcript's assistant messages, in order. */
export function transcriptCalls(messages: readonly WireMessage[]): TranscriptCall[] {
  return messages.flatMap((m) =>
    (m.tools_calls ?? []).map((call) => ({
      messageId: m.message_id,
      callId: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    })),
  );
}

/** The `<message id>:<call id>` a ledger key or a result's origin names. */
export function callRef(call: Pick<TranscriptCall, "messageId" | "callId">): string {
  return `${call.messageId}:${call.callId}`;
}

/**
 * Which ledger entry records each call, by {@link callRef}. A call's entry is keyed by its
 * reference, or (a tool with a domain key) says so in its result's `origin`. An entry under a
 * domain key with no result yet names no call: it goes to the first call of that tool left
 * without an entry, the best the ledger allows.
 */
export function linkCalls(
  calls: readonly TranscriptCall[],
  entries: readonly LedgerEntry[],
): Map<string, LedgerEntry> {
  const links = new Map<string, LedgerEntry>();
  const unlinked: LedgerEntry[] = [];
  const refs = new Set(calls.map(callRef));
  for (const entry of entries) {
    const named = [entry.key, originOf(entry)].find((ref) => ref !== null && refs.has(ref));
    if (named) links.set(named, entry);
    else unlinked.push(entry);
  }
  for (const entry of unlinked) {
    const call = calls.find((c) => c.name === entry.tool_name && !links.has(callRef(c)));
    if (call) links.set(callRef(call), entry);
  }
  return links;
}

/** The call that produced an entry's result, when the ledger recorded it. */
export function originOf(entry: LedgerEntry): string | null {
  const result = entry.result as RecordedResult | undefined;
  return typeof result?.origin === "string" ? result.origin : null;
}

/**
 * How a recorded call failed: the error code it recorded, `""` for a failure recorded without
 * one, `null` when it did not fail (or has no result yet).
 */
export function failureOf(entry: LedgerEntry): string | null {
  const result = entry.result as RecordedResult | undefined;
  if (typeof result?.errorCode === "string") return result.errorCode;
  return result?.value?.isError ? "" : null;
}

/** The DOM id of a ledger row, so a tool call can link to it. */
export function ledgerRowId(key: string): string {
  return `ledger-${key.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}
