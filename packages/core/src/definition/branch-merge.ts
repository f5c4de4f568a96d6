import { isDeepStrictEqual } from "node:util";
import type { Logger } from "../events/logger.js";
import { applyUpdate, type BaseState, type Reducer, type Reducers } from "./reducers.js";
import { deepCopy } from "./state-copy.js";

/** Fields of a state other than the transcript, deep-copied. */
export function snapshotFields(state: BaseState): Record<string, unknown> {
  const { messages: _messages, ...fields } = state;
  return deepCopy(fields);
}

/** The fields `state` changed relative to `baseline`. */
export function changedFields(
  baseline: Record<string, unknown>,
  state: BaseState,
): Record<string, unknown> {
  const current = state as unknown as Record<string, unknown>;
  const changes: Record<string, unknown> = {};
  for (const field of new Set([...Object.keys(baseline), ...Object.keys(current)])) {
    if (field === "messages") continue;
    if (!isDeepStrictEqual(baseline[field], current[field])) changes[field] = current[field];
  }
  return changes;
}

/** Who wrote the branches {@link mergeBranches} merges, for its warnings. */
export interface BranchWriters {
  /** Subject of the warnings: "Parallel tool calls". */
  who: string;
  /** Where the branches changed their copies: "ctx.state". */
  copies: string;
  /** The order the last write is kept in: "call order". */
  order: string;
  /** The log field listing the writers' ids. */
  idsField: string;
  /** How to write a field with a reducer so every branch's write goes through it. */
  throughReducer: string;
}

/**
 * Merges the fields parallel branches changed in their copies (in branch order) into `state`. A
 * field changed by one branch (or to the same value by several) takes that value. A field
 * changed differently by several keeps the last in branch order, with a warning naming it, since
 * the other writes are lost. A branch hands back whole values, not deltas, so even a field with
 * a reducer is not folded (a sum or a concat would count the baseline once per writer): the
 * warning says how to write such a field (see {@link applyCallUpdates}).
 */
export function mergeBranches(
  state: BaseState,
  branches: readonly { id: string; changes: Record<string, unknown> }[],
  reducers: Readonly<Record<string, Reducer<unknown> | undefined>>,
  logger: Logger,
  writers: BranchWriters,
): void {
  const target = state as unknown as Record<string, unknown>;
  const writes = new Map<string, { id: string; value: unknown }[]>();
  for (const { id, changes } of branches) {
    for (const [field, value] of Object.entries(changes)) {
      const list = writes.get(field) ?? [];
      list.push({ id, value });
      writes.set(field, list);
    }
  }
  for (const [field, list] of writes) {
    target[field] = list.at(-1)!.value;
    if (list.every((write) => isDeepStrictEqual(write.value, list[0]!.value))) continue;
    const fields = { field, [writers.idsField]: list.map((write) => write.id) };
    if (reducers[field]) {
      logger.warn(
        fields,
        `${writers.who} changed state field '${field}' differently in ${writers.copies}; kept the last in ${writers.order}. '${field}' has a reducer: ${writers.throughReducer}`,
      );
      continue;
    }
    logger.warn(
      fields,
      `${writers.who} wrote state field '${field}' differently; kept the last in ${writers.order} (declare a reducer to combine them)`,
    );
  }
}

/**
 * Applies the calls' `ctx.update` updates to `state` in place, call by call in tool-call order
 * and each call's in the order it made them, through the state's reducers: exactly what
 * {@link applyUpdate} does with a node's update, so a parallel node ends where the same updates
 * applied one after another would. Applied after {@link mergeBranches}: whole values written in
 * the copies stand for the baseline, deltas go on top.
 */
export function applyCallUpdates(
  state: BaseState,
  calls: readonly { updates: readonly Record<string, unknown>[] }[],
  reducers: Readonly<Record<string, Reducer<unknown> | undefined>>,
): void {
  for (const { updates } of calls) {
    for (const update of updates) {
      // Copied: a recorded update is applied again on replay, so a reducer keeping a reference
      // to it must not share it with the ledger's envelope.
      applyUpdate(state, structuredClone(update), reducers as Reducers<BaseState>);
    }
  }
}
