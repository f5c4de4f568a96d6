import { Message, type AnyTool, type ContentBlock, type ToolMessage } from "@tenxgraph/core";
import type {
  LanguageModelUsage,
  ModelMessage,
  ToolResultPart,
  ToolSet,
  UserContent,
  AssistantContent,
} from "ai";
import { jsonSchema } from "ai";
import type { TokenUsage } from "@tenxgraph/core";

type ProviderOptions = NonNullable<ToolResultPart["providerOptions"]>;
type ToolResultContent = Extract<ToolResultPart["output"], { type: "content" }>["value"];

/** What the provider's API accepts, where providers differ. */
export interface MappingOptions {
  /**
   * Images and files in a tool result are sent as media (Anthropic, Gemini, OpenAI Responses).
   * When `false` (Chat Completions and the APIs that copy it take only text in a tool message)
   * each becomes a `[image: image/png]` placeholder beside the result's text: the SDK would
   * otherwise write the media's base64 into that text, thousands of tokens the model reads as
   * characters.
   */
  mediaInToolResults: boolean;
}

/** Whether a provider (a model's `provider` id) takes images and files in a tool result. */
export function acceptsMediaInToolResults(provider: string): boolean {
  // `anthropic.messages`, `vertex.anthropic.messages`, `google.generative-ai`,
  // `google.vertex.chat`, `openai.responses`; any other gets placeholders, which never fail.
  return /anthropic|^google\.|\.responses$/.test(provider);
}

/**
 * Our transcript in the AI SDK's message shape. A tool message needs the name of the tool it
 * answers; it comes from the latest assistant message that issued that call id (providers
 * reuse ids like `call_1` across turns, so the latest issuer is the right one). Without
 * `options`, media in tool results is sent as it is.
 */
export function toModelMessages(
  messages: readonly Message[],
  options: MappingOptions = { mediaInToolResults: true },
): ModelMessage[] {
  const toolNames = new Map<string, string>();
  const out: ModelMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        out.push({ role: "system", content: Message.text(message) });
        break;
      case "user":
        out.push({ role: "user", content: userContent(message.content) });
        break;
      case "assistant":
        for (const call of message.toolCalls ?? []) toolNames.set(call.id, call.name);
        out.push({ role: "assistant", content: assistantContent(message) });
        break;
      case "tool":
        out.push({ role: "tool", content: [toolResult(message, toolNames, options)] });
        break;
    }
  }
  return out;
}

function userContent(content: string | ContentBlock[]): UserContent {
  if (typeof content === "string") return content;
  return content.map((block) => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text };
      case "image":
        return {
          type: "image",
          image: mediaSource(block, "image"),
          ...(block.mediaType ? { mediaType: block.mediaType } : {}),
        };
      case "file":
        return {
          type: "file",
          data: mediaSource(block, "file"),
          mediaType: block.mediaType,
          ...(block.filename ? { filename: block.filename } : {}),
        };
    }
  });
}

/**
 * An assistant message as the provider sent it: reasoning first (Anthropic refuses a tool call
 * whose signed thinking block is missing or moved), then text, then the calls. Each reasoning
 * block and call carries back the provider's data it came with (signatures).
 */
function assistantContent(message: Extract<Message, { role: "assistant" }>): AssistantContent {
  const parts: Exclude<AssistantContent, string> = [];
  for (const block of message.reasoning ?? []) {
    parts.push({ type: "reasoning", text: block.text, ...providerOptions(block) });
  }
  const text = Message.text(message);
  if (text) parts.push({ type: "text", text });
  for (const call of message.toolCalls ?? []) {
    parts.push({
      type: "tool-call",
      toolCallId: call.id,
      toolName: call.name,
      input: callInput(call.arguments),
      ...providerOptions(call),
    });
  }
  return parts;
}

/** What the provider attached to a part of its reply, as the options it reads on the way back. */
function providerOptions(part: { providerMetadata?: Record<string, Record<string, unknown>> }): {
  providerOptions?: ProviderOptions;
} {
  // The metadata came from the provider as JSON and was stored as JSON.
  return part.providerMetadata ? { providerOptions: part.providerMetadata as ProviderOptions } : {};
}

/**
 * The arguments the model sent, as the object providers expect back. Arguments that were not a
 * JSON object (the tool already answered that call with `TOOL_ARGS_001`) are sent as `{}`:
 * some providers reject a call whose input is not an object, which would break the thread.
 */
function callInput(raw: string): Record<string, unknown> {
  try {
    const parsed: unknown = raw.trim() === "" ? {} : JSON.parse(raw);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function toolResult(
  message: ToolMessage,
  toolNames: ReadonlyMap<string, string>,
  options: MappingOptions,
): ToolResultPart {
  const toolName = toolNames.get(message.toolCallId);
  if (toolName === undefined) {
    throw new TypeError(
      `Tool message ${message.id} answers call '${message.toolCallId}', ` +
        `but no earlier assistant message issued that call`,
    );
  }
  const content = message.content;
  let output: ToolResultPart["output"];
  const textOnly = typeof content === "string" || content.every((b) => b.type === "text");
  if (textOnly || !options.mediaInToolResults) {
    const value = textOnly ? Message.text(message) : content.map(placeholderText).join("\n");
    output = message.isError ? { type: "error-text", value } : { type: "text", value };
  } else {
    output = { type: "content", value: content.map(toolResultBlock) };
  }
  return { type: "tool-result", toolCallId: message.toolCallId, toolName, output };
}

function toolResultBlock(block: ContentBlock): ToolResultContent[number] {
  if (block.type === "text") return { type: "text", text: block.text };
  const mediaType = block.mediaType ?? "application/octet-stream";
  if (block.data !== undefined) {
    return block.type === "image"
      ? { type: "image-data", data: block.data, mediaType }
      : { type: "file-data", data: block.data, mediaType, ...filename(block) };
  }
  if (block.url !== undefined) {
    return block.type === "image"
      ? { type: "image-url", url: block.url }
      : { type: "file-url", url: block.url, mediaType };
  }
  throw new TypeError(`A ${block.type} block of a tool message has neither 'data' nor 'url'`);
}

/** A block as text: its text, or a short note naming the media that is not sent. */
function placeholderText(block: ContentBlock): string {
  if (block.type === "text") return block.text;
  return `[${block.type}: ${block.mediaType ?? "unknown type"}]`;
}

function filename(block: ContentBlock): { filename?: string } {
  return block.type === "file" && block.filename ? { filename: block.filename } : {};
}

/** An image or file block's bytes (base64) or URL, which must have one of them. */
function mediaSource(block: { url?: string; data?: string }, kind: string): string | URL {
  if (block.data !== undefined) return block.data;
  if (block.url !== undefined) return new URL(block.url);
  throw new TypeError(`A user ${kind} block has neither 'data' nor 'url'`);
}

/**
 * Our tools as the AI SDK's tool set: name, description and the JSON Schema of the zod schema.
 * No `execute`, so the SDK returns the calls and our `ToolNode` runs them through the ledger.
 */
export function toToolSet(tools: readonly AnyTool[]): ToolSet {
  const set: ToolSet = {};
  for (const tool of tools) {
    // `$schema` names the JSON Schema dialect; providers want the bare schema object.
    const { $schema: _dialect, ...schema } = tool.jsonSchema();
    set[tool.name] = { description: tool.description, inputSchema: jsonSchema(schema) };
  }
  return set;
}

/** The token counts the provider reported, without the ones it left out. */
export function toTokenUsage(usage: LanguageModelUsage | undefined): TokenUsage | undefined {
  if (!usage) return undefined;
  const out: TokenUsage = {};
  if (usage.inputTokens !== undefined) out.inputTokens = usage.inputTokens;
  if (usage.outputTokens !== undefined) out.outputTokens = usage.outputTokens;
  if (usage.totalTokens !== undefined) out.totalTokens = usage.totalTokens;
  return Object.keys(out).length > 0 ? out : undefined;
}
