import { z } from "zod";
import type { Message } from "../messages/message.js";
import type { BaseState } from "./reducers.js";

/**
 * The transcript as a field of a state schema (that of `MessagesZodState`): the one `messages`
 * a schema may name, since the runtime owns the field (it merges by id with `appendMessages`
 * and checks every message itself); the schema only types it.
 */
export const messagesField = z.custom<Message[]>((value) => Array.isArray(value), {
  message: "messages must be an array of messages",
});

/** A graph's state schema: a zod object of the fields besides `messages`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type StateSchema = z.ZodObject<any>;

/**
 * The state a schema describes: its output type, plus the transcript every graph has.
 *
 * @example
 * const Triage = z.object({ priority: z.enum(["low", "high"]).default("low") });
 * type TriageState = StateOf<typeof Triage>; // BaseState & { priority: "low" | "high" }
 */
export type StateOf<T extends StateSchema> = BaseState & z.output<T>;

/** True for a zod object schema (checked by shape, so two copies of zod both work). */
export function isStateSchema(value: unknown): value is StateSchema {
  const candidate = value as { safeParse?: unknown; shape?: unknown } | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.safeParse === "function" &&
    typeof candidate.shape === "object" &&
    candidate.shape !== null
  );
}

/** Refuses a schema the runtime cannot honour: `messages` is the engine's own field. */
export function requireStateSchema(schema: unknown): asserts schema is StateSchema {
  if (!isStateSchema(schema)) {
    throw new TypeError("StateGraph: a state schema must be a zod object, e.g. z.object({ ... })");
  }
  if (Object.hasOwn(schema.shape, "messages") && schema.shape.messages !== messagesField) {
    throw new TypeError(
      "StateGraph: leave `messages` out of the state schema, or extend MessagesZodState; every " +
        "graph has it (an append-only transcript)",
    );
  }
}

/**
 * The values a new thread starts with: each field whose schema accepts a missing value and
 * gives one back (`.default(x)`, `.catch(x)`). Optional fields without a default stay absent.
 */
/** The schema the runtime checks the fields with: `messages` is its own business. */
export function fieldsSchema(schema: StateSchema): StateSchema {
  return Object.hasOwn(schema.shape, "messages") ? schema.omit({ messages: true }) : schema;
}

export function schemaDefaults(schema: StateSchema): Record<string, unknown> {
  const defaults: Record<string, unknown> = {};
  for (const [field, fieldSchema] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const parsed = fieldSchema.safeParse(undefined);
    if (parsed.success && parsed.data !== undefined) defaults[field] = parsed.data;
  }
  return defaults;
}

/**
 * Checks the state's fields (not `messages`) against the schema; returns the first problem,
 * naming the field (`total: Invalid input: expected number, received string`), or null. The
 * state is checked, never converted: a schema's transforms and coercions do not change it.
 */
export function findSchemaProblem(schema: StateSchema, state: BaseState): string | null {
  const { messages: _messages, ...values } = state;
  const parsed = schema.safeParse(values);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.map(String).join(".") : "(state)";
  return `${where}: ${issue?.message ?? "does not match the schema"}`;
}
