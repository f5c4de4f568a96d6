import type { CheckpointRecord } from "./checkpointer.js";

/**
 * A {@link CheckpointRecord} as a store keeps it: one plain-JSON object, stored whole (a `jsonb`
 * or TEXT column, a field of the in-memory store) and never looked into by the store.
 */
export type EncodedCheckpointRecord = { readonly [field: string]: unknown };

/**
 * Every field of {@link CheckpointRecord}, each with the value it reads as when a stored record
 * lacks it (a row written before the field existed). The compiler holds this table to the
 * interface, so a field added there cannot be forgotten here; `undefined` marks an optional
 * field, left out of the record while empty.
 */
const FIELDS: { [Field in keyof Required<CheckpointRecord>]: () => CheckpointRecord[Field] } = {
  step: () => 0,
  currentNode: () => null,
  frontier: () => undefined,
  values: () => ({}),
  interrupts: () => [],
  resumeAnswers: () => ({}),
};

const NAMES = Object.keys(FIELDS) as (keyof CheckpointRecord)[];

/**
 * The runtime's fields of a checkpoint or write, as the one value a store keeps. An empty
 * optional field (the frontier of the plain chain: `null` or absent) is left out.
 */
export function encodeCheckpointRecord(fields: CheckpointRecord): EncodedCheckpointRecord {
  const record: Record<string, unknown> = {};
  for (const name of NAMES) {
    const value = fields[name];
    if (value !== undefined && (value !== null || FIELDS[name]() !== undefined)) {
      record[name] = value;
    }
  }
  return record;
}

/**
 * The runtime's fields from the value a store kept. Tolerant: a field the value lacks reads as
 * its default, and fields it does not know are ignored, so a record any release wrote reads.
 */
export function decodeCheckpointRecord(stored: EncodedCheckpointRecord): CheckpointRecord {
  const record: Record<string, unknown> = {};
  for (const name of NAMES) {
    const value = stored[name] ?? FIELDS[name]();
    if (value !== undefined) record[name] = value;
  }
  return record as unknown as CheckpointRecord;
}
