import type { Message } from "@tenxgraph/core";

/** One call of the step function, with its 17 arguments as placeholders (the tests' raw step). */
export const STEP = `SELECT * FROM tenxgraph_put_checkpoint($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb,
  $10, $11::jsonb, $12, $13::jsonb, $14, $15::jsonb, $16::jsonb, $17)`;

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
