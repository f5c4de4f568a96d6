import { z } from "zod";
import { uuidv7 } from "./ids.js";

/** One content block of a multi-part message. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; url?: string; data?: string; mediaType?: string }
  | { type: "file"; url?: string; data?: string; mediaType: string; filename?: string };

/** A tool call as the model produced it; `arguments` is the model's raw JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  /**
   * What the provider attached to the call, keyed by provider (`{ google: { thoughtSignature } }`),
   * sent back with the call on the next request: some providers refuse a call without it.
   */
  providerMetadata?: ProviderMetadata;
}

/** Provider-specific JSON, keyed by provider name (`{ anthropic: { signature: "…" } }`). */
type ProviderMetadata = Record<string, Record<string, unknown>>;

/** Token counts a model reported for the message that carries them. */
export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

interface MessageBase {
  /** Unique, generated at creation (UUIDv7); never changes once persisted. */
  id: string;
  content: string | ContentBlock[];
  /** ISO-8601 creation time. */
  createdAt: string;
}

// `toolCalls?: never` on the other roles lets `messages.at(-1)?.toolCalls` read naturally.
/** Instructions for the model. */
export interface SystemMessage extends MessageBase {
  role: "system";
  toolCalls?: never;
}
/** What the user said. */
export interface UserMessage extends MessageBase {
  role: "user";
  toolCalls?: never;
}
/** What the model said, with the tool calls it asked for. */
export interface AssistantMessage extends MessageBase {
  role: "assistant";
  toolCalls?: ToolCall[];
  usage?: TokenUsage;
  /**
   * The model's reasoning before it answered, in order, as its provider sent it, with the
   * provider's data for each block (a signature, redacted reasoning). Providers that sign it
   * (Anthropic's thinking) need it back, unchanged, before the message's tool calls.
   */
  reasoning?: { text: string; providerMetadata?: ProviderMetadata }[];
}
/** The result of one tool call, answering `toolCallId`. */
export interface ToolMessage extends MessageBase {
  role: "tool";
  toolCalls?: never;
  toolCallId: string;
  isError?: boolean;
}

/** A message of the transcript. Plain JSON: `JSON.parse(JSON.stringify(m))` is the same message. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/**
 * In a state update's `messages`, removes the message `id` from the transcript, or every message
 * (`id` {@link REMOVE_ALL_MESSAGES}). Made by `Message.remove(id)` and `Message.removeAll()`;
 * LangGraph's `RemoveMessage`. The version written keeps the removed messages readable in the
 * thread's history: nothing stored is rewritten.
 */
export interface MessageRemoval {
  role: "remove";
  id: string;
}

/** The id of `Message.removeAll()`: removes every message before it in the update. */
export const REMOVE_ALL_MESSAGES = "__remove_all__";

/** What an update's `messages` may hold: messages to append or replace (same id), and removals. */
export type MessageUpdate = Message | MessageRemoval;
/** Who a message is from. */
export type Role = Message["role"];

const contentBlockSchema = z.union([
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({
    type: z.literal("image"),
    url: z.string().optional(),
    data: z.string().optional(),
    mediaType: z.string().optional(),
  }),
  z.object({
    type: z.literal("file"),
    url: z.string().optional(),
    data: z.string().optional(),
    mediaType: z.string(),
    filename: z.string().optional(),
  }),
]);

const providerMetadataSchema = z.record(z.string(), z.record(z.string(), z.unknown()));

const base = {
  id: z.string().min(1),
  content: z.union([z.string(), z.array(contentBlockSchema)]),
  createdAt: z.string(),
};

/**
 * Validates message JSON read back from storage or received over the wire. Fields it does not
 * know (provider metadata, a later version's additions) are kept, not stripped, so message JSON
 * stays versionable.
 */
export const messageSchema: z.ZodType<Message> = z.discriminatedUnion("role", [
  z.looseObject({ ...base, role: z.literal("system") }),
  z.looseObject({ ...base, role: z.literal("user") }),
  z.looseObject({
    ...base,
    role: z.literal("assistant"),
    toolCalls: z
      .array(
        z.object({
          id: z.string(),
          name: z.string(),
          arguments: z.string(),
          providerMetadata: providerMetadataSchema.optional(),
        }),
      )
      .optional(),
    reasoning: z
      .array(z.object({ text: z.string(), providerMetadata: providerMetadataSchema.optional() }))
      .optional(),
    usage: z
      .object({
        inputTokens: z.number().optional(),
        outputTokens: z.number().optional(),
        totalTokens: z.number().optional(),
      })
      .optional(),
  }),
  z.looseObject({
    ...base,
    role: z.literal("tool"),
    toolCallId: z.string(),
    isError: z.boolean().optional(),
  }),
]) as z.ZodType<Message>;

/**
 * True when `value` is surely a message `messageSchema` accepts, found without zod: the common
 * shape, with string content and no optional parts beyond `toolCalls` (without metadata) and
 * `isError`. False means only "not this shape": ask the schema, which also says what is wrong.
 * Every new message of every step is checked, and zod's parse was most of a check's cost.
 */
export function isPlainMessage(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  if (typeof m.id !== "string" || m.id.length === 0) return false;
  if (typeof m.content !== "string" || typeof m.createdAt !== "string") return false;
  switch (m.role) {
    case "system":
    case "user":
      return true;
    case "tool":
      return (
        typeof m.toolCallId === "string" &&
        (m.isError === undefined || typeof m.isError === "boolean")
      );
    case "assistant":
      return (
        m.reasoning === undefined &&
        m.usage === undefined &&
        (m.toolCalls === undefined ||
          (Array.isArray(m.toolCalls) && m.toolCalls.every(isPlainCall)))
      );
    default:
      return false;
  }
}

function isPlainCall(call: unknown): boolean {
  if (typeof call !== "object" || call === null || Array.isArray(call)) return false;
  const c = call as Record<string, unknown>;
  return (
    typeof c.id === "string" &&
    typeof c.name === "string" &&
    typeof c.arguments === "string" &&
    c.providerMetadata === undefined
  );
}

/**
 * The id and time of a new message. The factories copy its two fields by name: spreading it
 * into a literal with more keys takes V8's slow path (microseconds per message on Node 20).
 */
function stamp() {
  return { id: uuidv7(), createdAt: new Date().toISOString() };
}

/**
 * Message factories. Each gives the message a fresh id at creation.
 *
 * @example
 * Message.user("charge order 4821");
 * Message.assistant("", [{ id: "call_1", name: "charge_card", arguments: '{"order_id":"4821"}' }]);
 * Message.tool("call_1", "Charged 42 USD");
 */
export const Message = {
  system(content: string | ContentBlock[]): SystemMessage {
    const { id, createdAt } = stamp();
    return { id, createdAt, role: "system", content };
  },
  user(content: string | ContentBlock[]): UserMessage {
    const { id, createdAt } = stamp();
    return { id, createdAt, role: "user", content };
  },
  assistant(
    content: string | ContentBlock[],
    toolCalls?: ToolCall[],
    extra?: { usage?: TokenUsage },
  ): AssistantMessage {
    const { id, createdAt } = stamp();
    const message: AssistantMessage = { id, createdAt, role: "assistant", content };
    if (toolCalls?.length) message.toolCalls = toolCalls;
    if (extra?.usage) message.usage = extra.usage;
    return message;
  },
  tool(
    toolCallId: string,
    content: string | ContentBlock[],
    options?: { isError?: boolean },
  ): ToolMessage {
    const { id, createdAt } = stamp();
    const message: ToolMessage = { id, createdAt, role: "tool", content, toolCallId };
    if (options?.isError) message.isError = true;
    return message;
  },
  /**
   * Removes message `id` from the transcript when returned in an update's `messages`. To edit a
   * message instead, return it again with the same id and new content.
   */
  remove(id: string): MessageRemoval {
    if (typeof id !== "string" || id.length === 0) {
      throw new TypeError("Message.remove(id): id must be the non-empty id of a message");
    }
    return { role: "remove", id };
  },
  /** Removes every message of the transcript when returned in an update's `messages`. */
  removeAll(): MessageRemoval {
    return { role: "remove", id: REMOVE_ALL_MESSAGES };
  },
  /** True for `Message.remove(id)` and `Message.removeAll()` values. */
  isRemoval(value: unknown): value is MessageRemoval {
    const removal = value as MessageRemoval | null;
    return (
      typeof removal === "object" &&
      removal !== null &&
      removal.role === "remove" &&
      typeof removal.id === "string" &&
      Object.keys(removal).length === 2
    );
  },
  /** Parses message JSON (a string or a parsed object); throws a zod error naming the bad field. */
  parse(json: unknown): Message {
    return messageSchema.parse(typeof json === "string" ? JSON.parse(json) : json);
  },
  /** True for a value shaped like a message. */
  is(value: unknown): value is Message {
    return isPlainMessage(value) || messageSchema.safeParse(value).success;
  },
  /** The text of a message's content, content blocks joined. */
  text(message: Message): string {
    if (typeof message.content === "string") return message.content;
    return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  },
};
