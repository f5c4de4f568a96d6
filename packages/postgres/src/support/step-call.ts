import type { Message } from "@tenxgraph/core";

/** The store's own step statement, which the tests send with {@link stepArgs}. */
export { PUT_CHECKPOINT as STEP } from "../step-write.js";

/**
 * The arguments of {@link STEP} for a step of `threadId` from version `expected` that appends
 * `messages` and writes no ledger rows: the write a store makes for a plain step, as SQL.
 */
export function stepArgs(
  threadId: string,
  expected: number,
  {
    messages = [] as Message[],
    userId = null as string | null,
    parent = expected,
    life = "life",
    record = JSON.stringify({ step: expected + 1 }),
  } = {},
): unknown[] {
  return [
    threadId,
    life,
    userId,
    expected,
    parent,
    "MAIN",
    "run-1",
    "running",
    record,
    messages.map((message) => message.id),
    JSON.stringify(messages),
    [],
    "[]",
    [],
    "[]",
    "[]",
    null,
  ];
}
