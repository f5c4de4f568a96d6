/** The key of `json.ts`'s wrapper: a value whose JSON text `jsonb` refuses is kept inside it. */
const WRAPPER_KEY = "$tenxgraph.jsonText";

/** True when the `jsonb` column `column` holds a wrapped value (see `toJsonb`); false for NULL. */
function wrapped(column: string): string {
  return `CASE WHEN jsonb_typeof(${column}) = 'object'
            THEN ${column} - '${WRAPPER_KEY}' = '{}'::jsonb
                 AND jsonb_typeof(${column}->'${WRAPPER_KEY}') = 'string'
            ELSE false END`;
}

/** The JSON text of the `jsonb` column `column`, unwrapped; `null` for SQL `NULL`. */
function jsonText(column: string): string {
  return `coalesce(CASE WHEN ${wrapped(column)} THEN ${column}->>'${WRAPPER_KEY}'
                        ELSE ${column}::text END, 'null')`;
}

const FORMER_COLUMNS = ["frontier", `"values"`, "interrupts", "resume_answers"];

/**
 * Migration 10: one checkpoint record. The fields only the runtime reads (step, current node,
 * frontier, values, interrupts, resume answers) become one `jsonb` value, `states.record`, that
 * the store keeps whole: `encodeCheckpointRecord` of `@tenxgraph/core/storage` makes it and
 * `decodeCheckpointRecord` reads it (tolerating fields a record lacks), so a new runtime field
 * needs no column, no function argument and no migration.
 *
 * Every kept version gets its record from its former columns, which then go. A column that held
 * a wrapped value (text `jsonb` refuses, see json.ts) cannot be unwrapped inside `jsonb`, so a
 * row with one gets its whole record wrapped instead, built as text, which `fromJsonb` unwraps
 * as it does any wrapped value.
 */
export const CHECKPOINT_RECORD_MIGRATION: readonly string[] = [
  `ALTER TABLE states ADD COLUMN record jsonb`,
  `UPDATE states
   SET record = jsonb_build_object('step', step, 'currentNode', current_node,
                                   'frontier', frontier, 'values', "values",
                                   'interrupts', interrupts, 'resumeAnswers', resume_answers)
   WHERE NOT (${FORMER_COLUMNS.map((column) => `coalesce(${wrapped(column)}, false)`).join(" OR ")})`,
  `UPDATE states
   SET record = jsonb_build_object('${WRAPPER_KEY}',
     '{"step":' || step::text || ',"currentNode":' || coalesce(to_jsonb(current_node)::text, 'null')
     || ',"frontier":' || ${jsonText("frontier")} || ',"values":' || ${jsonText(`"values"`)}
     || ',"interrupts":' || ${jsonText("interrupts")}
     || ',"resumeAnswers":' || ${jsonText("resume_answers")} || '}')
   WHERE record IS NULL`,
  `ALTER TABLE states ALTER COLUMN record SET NOT NULL, DROP COLUMN step,
    DROP COLUMN current_node, DROP COLUMN frontier, DROP COLUMN "values", DROP COLUMN interrupts,
    DROP COLUMN resume_answers`,
];
