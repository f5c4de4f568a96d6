import type { StateHistoryEntry as WireHistoryEntry } from "@tenxgraph/client";
import type { BaseState, StateHistoryEntry } from "@tenxgraph/core";
import { LG_THREAD_FIELD, THREAD_NAME_FIELD } from "./thread-name-field.js";

/** A version on the wire: snake_case, without the transcript (it names its message count). */
export function wireHistoryEntry(entry: StateHistoryEntry<BaseState>): WireHistoryEntry {
  const {
    [THREAD_NAME_FIELD]: _name,
    [LG_THREAD_FIELD]: _record,
    ...values
  } = entry.values as Record<string, unknown>;
  return {
    version: entry.version,
    parent_version: entry.parentVersion,
    step: entry.step,
    node: entry.node,
    next_node: entry.nextNode,
    status: entry.status,
    run_id: entry.runId,
    created_at: entry.createdAt,
    values,
    message_count: entry.messageCount,
    interrupts: entry.interrupts,
    trace_id: entry.traceId,
  };
}
