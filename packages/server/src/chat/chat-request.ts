import { z } from "zod";
import { bodyIdSchema } from "../http/request-limits.js";

/** A part of a UI message: a `type` and that type's fields. */
const uiPartSchema = z.looseObject({ type: z.string().min(1) });

/** A UI message as `useChat` keeps it (`UIMessage` of the AI SDK). */
const uiMessageSchema = z.looseObject({
  id: bodyIdSchema.min(1),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(uiPartSchema),
});

/** One UI message, validated. */
export type UiMessage = z.infer<typeof uiMessageSchema>;

/**
 * `POST /v1/chat`: the body `DefaultChatTransport` sends (AI SDK 6). `id` is the chat's id, the
 * thread's; `messages` the whole chat as the page holds it, of which only the last is read (the
 * thread holds the rest). Fields a transport's `body` option adds are ignored.
 */
export const chatRequestSchema = z.looseObject({
  id: bodyIdSchema.min(1, "id (the chat id) must not be empty"),
  messages: z.array(uiMessageSchema).min(1, "messages must not be empty"),
  trigger: z.enum(["submit-message", "regenerate-message"]),
  messageId: z.string().min(1).optional(),
});

/** A validated `POST /v1/chat` body. */
export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** A tool part of an assistant UI message, as the client sends it back with its answer. */
const answeredToolPartSchema = z.union([
  z.looseObject({
    type: z.string(),
    toolCallId: z.string(),
    state: z.literal("approval-responded"),
    approval: z.looseObject({
      id: z.string(),
      approved: z.boolean(),
      reason: z.string().optional(),
    }),
  }),
  z.looseObject({
    type: z.string(),
    toolCallId: z.string(),
    state: z.literal("output-available"),
    output: z.unknown(),
  }),
]);

/** A tool part carrying the user's answer: an approval response, or an output it added. */
export type AnsweredToolPart = z.infer<typeof answeredToolPartSchema>;

/** The tool parts of `message` that carry an answer, by tool call id. */
export function answeredToolParts(message: UiMessage): Map<string, AnsweredToolPart> {
  const answered = new Map<string, AnsweredToolPart>();
  for (const part of message.parts) {
    if (!part.type.startsWith("tool-") && part.type !== "dynamic-tool") continue;
    const parsed = answeredToolPartSchema.safeParse(part);
    if (parsed.success) answered.set(parsed.data.toolCallId, parsed.data);
  }
  return answered;
}

/**
 * The text of a user UI message, as a wire message's content blocks. Only text parts are read:
 * any other part is refused with its index, so nothing the user attached is silently dropped.
 */
export function userMessageText(message: UiMessage): { text?: string; badPart?: number } {
  const texts: string[] = [];
  for (const [index, part] of message.parts.entries()) {
    if (part.type === "step-start") continue;
    if (part.type !== "text" || typeof part.text !== "string") return { badPart: index };
    texts.push(part.text);
  }
  return { text: texts.join("") };
}
