import type { ContentBlock, Message } from "@tenxgraph/core";
import { uuidv7 } from "@tenxgraph/core/host";
import { ApiError } from "../http/api-error.js";
import type { ContentBlock as WireContentBlock } from "@tenxgraph/client";
import type { WireMessage, WireMessageInput } from "./wire-message.js";

/** Ids a client uses for "no id yet": the server mints a fresh one for these. */
const PLACEHOLDER_IDS = new Set(["", "0"]);

/**
 * A wire message as a tenxgraph message. Placeholder ids (`"0"`, empty, null, absent) get a
 * fresh UUIDv7 here, at the API boundary, so two client messages never share an id.
 * `index` names the message in errors (`messages[2]`).
 */
export function fromWireMessage(input: WireMessageInput, index: number): Message {
  const raw = input.message_id;
  const id =
    raw === null || raw === undefined || PLACEHOLDER_IDS.has(String(raw).trim())
      ? uuidv7()
      : String(raw);
  const createdAt = toIsoTime(input.timestamp);
  const blocks =
    typeof input.content === "string" ? [{ type: "text", text: input.content }] : input.content;
  if (input.role === "tool") return toolMessage(input, blocks, id, createdAt, index);
  const content = toCoreContent(blocks, index);
  if (input.role === "assistant") {
    const toolCalls = (input.tools_calls ?? []).map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments:
        typeof call.function.arguments === "string"
          ? call.function.arguments
          : JSON.stringify(call.function.arguments ?? {}),
    }));
    return toolCalls.length
      ? { id, role: "assistant", content, createdAt, toolCalls }
      : { id, role: "assistant", content, createdAt };
  }
  return { id, role: input.role, content, createdAt };
}

function toolMessage(
  input: WireMessageInput,
  blocks: Record<string, unknown>[],
  id: string,
  createdAt: string,
  index: number,
): Message {
  const result = blocks.find((b) => b.type === "tool_result");
  const callId = (result?.call_id as string | undefined) ?? input.tool_call_id ?? undefined;
  if (typeof callId !== "string" || callId === "") {
    throw new ApiError(
      422,
      "VALIDATION_ERROR",
      `messages[${index}]: a tool message needs a tool_result block with call_id (or tool_call_id)`,
      [
        {
          loc: ["body", "messages", String(index), "content"],
          msg: "tool message without call_id",
          type: "value_error",
        },
      ],
    );
  }
  const output = result ? result.output : blocks.map((b) => b.text ?? "").join("");
  const content = typeof output === "string" ? output : JSON.stringify(output ?? null);
  const isError = result?.is_error === true || result?.status === "failed";
  return isError
    ? { id, role: "tool", content, createdAt, toolCallId: callId, isError: true }
    : { id, role: "tool", content, createdAt, toolCallId: callId };
}

function toCoreContent(blocks: Record<string, unknown>[], index: number): string | ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const [i, block] of blocks.entries()) {
    if (block.type === "text") {
      if (typeof block.text !== "string")
        throw badBlock(index, i, "a text block needs a string 'text'");
      out.push({ type: "text", text: block.text });
    } else if (block.type === "image" || block.type === "document" || block.type === "data") {
      out.push(mediaBlock(block));
    } else if (
      block.type === "tool_call" ||
      block.type === "reasoning" ||
      block.type === "annotation"
    ) {
      continue; // carried by tools_calls / not model input
    } else {
      throw badBlock(index, i, `unsupported content block type '${String(block.type)}'`);
    }
  }
  return out.length === 1 && out[0]!.type === "text" ? out[0]!.text : out;
}

function mediaBlock(block: Record<string, unknown>): ContentBlock {
  const media = (block.media ?? {}) as Record<string, unknown>;
  const url = typeof media.url === "string" ? media.url : undefined;
  const data =
    typeof (media.data_base64 ?? block.data_base64) === "string"
      ? String(media.data_base64 ?? block.data_base64)
      : undefined;
  const mediaType = String(media.mime_type ?? block.mime_type ?? "application/octet-stream");
  if (block.type === "image") {
    return { type: "image", ...(url ? { url } : {}), ...(data ? { data } : {}), mediaType };
  }
  const filename = typeof media.filename === "string" ? media.filename : undefined;
  return {
    type: "file",
    ...(url ? { url } : {}),
    ...(data ? { data } : {}),
    mediaType,
    ...(filename ? { filename } : {}),
  };
}

function badBlock(message: number, block: number, msg: string): ApiError {
  return new ApiError(422, "VALIDATION_ERROR", `messages[${message}].content[${block}]: ${msg}`, [
    {
      loc: ["body", "messages", String(message), "content", String(block)],
      msg,
      type: "value_error",
    },
  ]);
}

/** Clients send seconds (10xGraph) or milliseconds (its JS client): tell them apart by size. */
function toIsoTime(timestamp: number | null | undefined): string {
  if (timestamp === null || timestamp === undefined) return new Date().toISOString();
  const ms = timestamp > 1e11 ? timestamp : timestamp * 1000;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? new Date().toISOString() : date.toISOString();
}

/** A tenxgraph message as 10xGraph's `Message` dump: content blocks, `tools_calls`, seconds. */
export function toWireMessage(message: Message): WireMessage {
  const content = wireContent(message);
  const calls = message.role === "assistant" ? (message.toolCalls ?? []) : [];
  for (const call of calls) {
    content.push({
      type: "tool_call",
      id: call.id,
      name: call.name,
      args: parseArgs(call.arguments),
      tool_type: null,
    });
  }
  const usage = message.role === "assistant" ? message.usage : undefined;
  const reasoning = message.role === "assistant" ? message.reasoning : undefined;
  return {
    message_id: message.id,
    role: message.role,
    content,
    delta: false,
    tools_calls: calls.length
      ? calls.map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments },
        }))
      : null,
    reasoning: reasoning?.length ? reasoning.map((r) => r.text).join("\n") : null,
    timestamp: Date.parse(message.createdAt) / 1000,
    metadata: {},
    usages: usage
      ? {
          prompt_tokens: usage.inputTokens ?? 0,
          completion_tokens: usage.outputTokens ?? 0,
          total_tokens: usage.totalTokens ?? 0,
        }
      : null,
    raw: null,
    parsed_content: null,
  };
}

function wireContent(message: Message): WireContentBlock[] {
  if (message.role === "tool") {
    return [
      {
        type: "tool_result",
        call_id: message.toolCallId,
        output: typeof message.content === "string" ? message.content : message.content,
        is_error: message.isError === true,
        status: message.isError ? "failed" : "completed",
      },
    ];
  }
  if (typeof message.content === "string") {
    return message.content === "" ? [] : [{ type: "text", text: message.content, annotations: [] }];
  }
  return message.content.map((block) => {
    if (block.type === "text") return { type: "text", text: block.text, annotations: [] };
    const media = {
      kind: block.url ? "url" : "data",
      url: block.url ?? null,
      data_base64: block.data ?? null,
      mime_type: block.mediaType ?? null,
    };
    return block.type === "image"
      ? { type: "image", media }
      : { type: "document", media: { ...media, filename: block.filename ?? null } };
  });
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
