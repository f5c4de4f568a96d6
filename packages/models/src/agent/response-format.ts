import { ModelError } from "@tenxgraph/core";
import { Output } from "ai";
import type { z } from "zod";

/**
 * What the structured response must look like (LangGraph.js's `responseFormat`): a zod schema;
 * or `{ schema, prompt?, name?, description? }`, where `prompt` is the system prompt of the
 * request that asks for it; or the tuple `[prompt, schema]` (LangGraph's Python form).
 */
export type ResponseFormat<T = unknown> =
  | z.ZodType<T>
  | { schema: z.ZodType<T>; prompt?: string; name?: string; description?: string }
  | readonly [prompt: string, schema: z.ZodType<T>];

/** A checked {@link ResponseFormat}. */
export interface ResolvedResponseFormat {
  readonly schema: z.ZodType;
  readonly prompt: string | undefined;
  readonly name: string | undefined;
  readonly description: string | undefined;
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof (value as { safeParse?: unknown } | null)?.safeParse === "function";
}

/** Checks a `responseFormat` once, when the agent is built; a malformed one is a `TypeError`. */
export function resolveResponseFormat(format: unknown): ResolvedResponseFormat | undefined {
  if (format === undefined) return undefined;
  const problem = new TypeError(
    "Agent: responseFormat must be a zod schema, { schema, prompt? } or [prompt, schema]",
  );
  if (isZodSchema(format)) {
    return Object.freeze({
      schema: format,
      prompt: undefined,
      name: undefined,
      description: undefined,
    });
  }
  if (Array.isArray(format)) {
    const [prompt, schema] = format as unknown[];
    if (format.length !== 2 || typeof prompt !== "string" || !isZodSchema(schema)) throw problem;
    return Object.freeze({ schema, prompt, name: undefined, description: undefined });
  }
  if (typeof format !== "object" || format === null) throw problem;
  const { schema, prompt, name, description } = format as Record<string, unknown>;
  const optionalText = (value: unknown) => value === undefined || typeof value === "string";
  if (!isZodSchema(schema) || ![prompt, name, description].every(optionalText)) throw problem;
  return Object.freeze({
    schema,
    prompt: prompt as string | undefined,
    name: name as string | undefined,
    description: description as string | undefined,
  });
}

/** The AI SDK's request setting for it: the provider's JSON mode with the schema. */
export function outputOf(format: ResolvedResponseFormat) {
  return Output.object({
    schema: format.schema,
    ...(format.name !== undefined && { name: format.name }),
    ...(format.description !== undefined && { description: format.description }),
  });
}

/**
 * The structured response in the model's reply `text`, checked against the schema. A reply
 * that is not JSON, or JSON the schema refuses, is `MODEL_006` naming what is wrong; it is not
 * retried (asking again the same way rarely helps): the node fails, and `invoke(null)` runs it
 * again.
 */
export function parseStructuredResponse(
  model: string,
  text: string,
  format: ResolvedResponseFormat,
  attempts: number,
): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ModelError(
      "MODEL_006",
      model,
      `the structured response is not JSON: ${excerpt(text)}`,
      {
        cause,
        attempts,
      },
    );
  }
  const parsed = format.schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
    .join("; ");
  throw new ModelError(
    "MODEL_006",
    model,
    `the structured response does not match responseFormat's schema (${issues}): ${excerpt(text)}`,
    { cause: parsed.error, attempts },
  );
}

function excerpt(text: string): string {
  const shown = text.length > 120 ? `${text.slice(0, 117)}...` : text;
  return JSON.stringify(shown);
}
