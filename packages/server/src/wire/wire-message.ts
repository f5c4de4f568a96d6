import { z } from "zod";
import { bodyIdSchema } from "../http/request-limits.js";

/** A content block on the wire: a `type` and whatever fields that type has. */
export const wireBlockSchema = z.looseObject({ type: z.string().min(1) });

/** An OpenAI-style tool call, as `tools_calls` carries it. */
export const wireToolCallSchema = z.looseObject({
  id: bodyIdSchema.min(1),
  type: z.string().optional(),
  function: z.looseObject({
    name: z.string().min(1),
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  }),
});

/**
 * A message as 10xGraph clients send it. `content` is an array of blocks (a plain string is
 * accepted too); `message_id` may be `"0"`, empty, `null` or absent: the server mints one then.
 */
export const wireMessageSchema = z.looseObject({
  message_id: z.union([bodyIdSchema, z.number(), z.null()]).optional(),
  role: z.enum(["user", "assistant", "system", "tool"]),
  content: z.union([z.string(), z.array(wireBlockSchema)]),
  tools_calls: z.array(wireToolCallSchema).nullable().optional(),
  tool_call_id: bodyIdSchema.min(1).nullable().optional(),
  timestamp: z.number().nonnegative().nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** A message received over the wire, validated. */
export type WireMessageInput = z.infer<typeof wireMessageSchema>;

/** A message as the server sends it: the client's type, the one wire contract. */
export type { WireMessage } from "@tenxgraph/client";
