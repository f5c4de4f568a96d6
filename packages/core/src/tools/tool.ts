import { z } from "zod";
import type { BaseState } from "../definition/reducers.js";
import type { ContentBlock, ToolMessage } from "../messages/message.js";
import type { ToolContext } from "./tool-context.js";

/**
 * What `execute` may return: text, content blocks, a tool message, any JSON value, or
 * `new Command({ update })` whose `update.messages` is the call's tool message (its other
 * fields update the state as `ctx.update` does).
 */
export type ToolOutput = string | ContentBlock[] | ToolMessage | unknown;

/**
 * What happens to a call found `started` but never completed (the process died, or the tool
 * hung, after it may have taken effect):
 * - `"retry"` (default): run it again, at least once; counted and logged.
 * - `"fail"`: the model gets a tool error saying the outcome is unknown.
 * - `"interrupt"`: pause the run for a human, with the call's name and arguments.
 * - `{ reconcile }`: ask the external system; a returned value is recorded as the result,
 *   `undefined` means it did not happen and the tool runs.
 */
export type InDoubtPolicy<Args, S extends BaseState = BaseState> =
  "retry" | "fail" | "interrupt" | { reconcile(args: Args, ctx: ToolContext<S>): unknown };

/** A tool as defined by its author. */
export interface ToolDefinition<Schema extends z.ZodType, S extends BaseState = BaseState> {
  /** Letters, digits, `_` and `-`, at most 64 characters (what model providers accept). */
  name: string;
  description: string;
  schema: Schema;
  execute(args: z.infer<Schema>, ctx: ToolContext<S>): ToolOutput | Promise<ToolOutput>;
  /** Seconds this tool may run; overrides the run's `toolTimeout`. `null`, 0, negative or `Infinity`: none. */
  timeout?: number | null;
  /** A domain key: the call's ledger key (scoped by thread) and `ctx.idempotencyKey`. */
  idempotencyKey?: (args: z.infer<Schema>) => string;
  onInDoubt?: InDoubtPolicy<z.infer<Schema>, S>;
}

/** A tool ready for a `ToolNode`. */
export interface Tool<Args = unknown, S extends BaseState = BaseState> {
  readonly name: string;
  readonly description: string;
  readonly schema: z.ZodType<Args>;
  readonly timeout: number | null | undefined;
  readonly idempotencyKey: ((args: Args) => string) | undefined;
  readonly onInDoubt: InDoubtPolicy<Args, S>;
  execute(args: Args, ctx: ToolContext<S>): ToolOutput | Promise<ToolOutput>;
  /** The arguments' JSON Schema, for model adapters. */
  jsonSchema(): Record<string, unknown>;
}

/** Any tool, whatever its arguments and state: how collections of tools are held. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any, any>;

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Defines a tool. The arguments are checked against `schema` before `execute` runs; bad JSON or
 * arguments become a `TOOL_ARGS_001` tool message the model can correct.
 *
 * @example
 * const chargeCard = tool({
 *   name: "charge_card",
 *   description: "Charge the customer's saved card for an order.",
 *   schema: z.object({ order_id: z.string(), amount_cents: z.number().int() }),
 *   idempotencyKey: (args) => `order-${args.order_id}-charge`,
 *   async execute(args, ctx) {
 *     await payments.charge(args, { idempotencyKey: ctx.idempotencyKey, signal: ctx.signal });
 *     return `Charged ${args.amount_cents / 100} USD`;
 *   },
 * });
 */
export function tool<Schema extends z.ZodType, S extends BaseState = BaseState>(
  definition: ToolDefinition<Schema, S>,
): Tool<z.infer<Schema>, S> {
  validateDefinition(definition);
  let jsonSchema: Record<string, unknown> | undefined;
  return Object.freeze({
    name: definition.name,
    description: definition.description,
    schema: definition.schema as z.ZodType<z.infer<Schema>>,
    timeout: definition.timeout,
    idempotencyKey: definition.idempotencyKey,
    onInDoubt: definition.onInDoubt ?? "retry",
    execute: definition.execute,
    jsonSchema() {
      jsonSchema ??= z.toJSONSchema(definition.schema) as Record<string, unknown>;
      return jsonSchema;
    },
  });
}

function validateDefinition(definition: ToolDefinition<z.ZodType, never>): void {
  const problem = (what: string) => new TypeError(`tool('${definition?.name}'): ${what}`);
  if (typeof definition !== "object" || definition === null)
    throw problem("definition must be an object");
  if (typeof definition.name !== "string" || !TOOL_NAME.test(definition.name)) {
    throw problem("name must be 1-64 letters, digits, '_' or '-'");
  }
  if (typeof definition.description !== "string" || definition.description.trim() === "") {
    throw problem("description must be a non-empty string (the model reads it)");
  }
  if (typeof (definition.schema as { safeParse?: unknown })?.safeParse !== "function") {
    throw problem("schema must be a zod schema, e.g. z.object({ ... })");
  }
  if (typeof definition.execute !== "function") throw problem("execute must be a function");
  const timeout = definition.timeout;
  if (
    timeout !== undefined &&
    timeout !== null &&
    (typeof timeout !== "number" || Number.isNaN(timeout))
  ) {
    throw problem("timeout must be a number of seconds, or null");
  }
  const policy = definition.onInDoubt;
  const validPolicy =
    policy === undefined ||
    policy === "retry" ||
    policy === "fail" ||
    policy === "interrupt" ||
    (typeof policy === "object" && typeof policy?.reconcile === "function");
  if (!validPolicy)
    throw problem("onInDoubt must be 'retry', 'fail', 'interrupt' or { reconcile }");
  if (definition.idempotencyKey !== undefined && typeof definition.idempotencyKey !== "function") {
    throw problem("idempotencyKey must be a function of the arguments");
  }
}
