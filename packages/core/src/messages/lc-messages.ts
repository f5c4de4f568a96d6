import { InvalidRunError } from "../errors/errors.js";
import { uuidv7 } from "./ids.js";
import type { ContentBlock, Message, TokenUsage, ToolCall } from "./message.js";

/**
 * A LangChain message that cannot be ours (`INPUT_001`); `loc` is the path to the bad part, as
 * given by the caller (`["body", "input", "messages", "0", "content"]`).
 */
export class LcMessageError extends InvalidRunError {
  constructor(
    readonly loc: string[],
    readonly detail: string,
  ) {
    super("INPUT_001", `${loc.join(".")}: ${detail}`);
  }
}

/**
 * A message in LangChain's serialized shape (`BaseMessage.toDict()`'s data with its `type`), as
 * `@langchain/langgraph-sdk` sends and reads it. Shared by the server's LangGraph API and
 * `@tenxgraph/langchain`, which builds LangChain's message classes from it (and this module
 * knows LangChain only as JSON: the core imports no LangChain package).
 */
export interface LcMessage {
  type: "human" | "ai" | "tool" | "system";
  id: string;
  content: string | Record<string, unknown>[];
  name?: string;
  tool_calls?: { id: string; name: string; args: Record<string, unknown>; type: "tool_call" }[];
  invalid_tool_calls?: {
    id: string;
    name: string;
    args: string;
    error: string;
    type: "invalid_tool_call";
  }[];
  tool_call_id?: string;
  status?: "success" | "error";
  usage_metadata?: { input_tokens: number; output_tokens: number; total_tokens: number };
  additional_kwargs: Record<string, unknown>;
  response_metadata: Record<string, unknown>;
}

/**
 * What LangChain has no field for rides in `additional_kwargs.tenxgraph`, so a message read and
 * sent back (a state edit, a fork) is the same message: its time, the model's reasoning and
 * each call's provider data.
 */
interface TenxgraphKwargs {
  created_at?: string;
  reasoning?: unknown;
  /**
   * Each call's provider data as `[callId, data]` pairs. Pairs, not an object keyed by call id:
   * LangChain copies kwargs by assignment, which drops a key named `__proto__`. An object of
   * the older shape is still read.
   */
  provider_metadata?: CallPairs<unknown>;
  /** A call's arguments as the model wrote them, when `args` re-serialized differ (spacing). */
  raw_arguments?: CallPairs<string>;
  /** The calls' ids in the model's order, when invalid calls came between valid ones. */
  call_order?: string[];
  /** Our usage when it lacks a count: `usage_metadata` has all three, so it cannot say "unknown". */
  usage?: TokenUsage;
}

/**
 * What LangChain's message had that ours has no field for (its `name`, its other
 * `additional_kwargs`, `response_metadata`), kept on our message as `langchain` (message JSON
 * keeps unknown fields) so it is given back when the message goes back to LangChain.
 */
export interface LcExtras {
  name?: string;
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
}

const TYPE_OF_ROLE = { user: "human", assistant: "ai", tool: "tool", system: "system" } as const;

/** Ours as LangChain's serialized message. */
export function toLcMessage(message: Message): LcMessage {
  const extra: TenxgraphKwargs = { created_at: message.createdAt };
  const out: LcMessage = {
    type: TYPE_OF_ROLE[message.role],
    id: message.id,
    content: lcContent(message.content),
    additional_kwargs: {},
    response_metadata: {},
  };
  if (message.role === "assistant") {
    const calls = message.toolCalls ?? [];
    const parsed = calls.map((call) => ({ call, args: parseArgs(call.arguments) }));
    out.tool_calls = parsed
      .filter((p) => p.args !== null)
      .map(({ call, args }) => ({ id: call.id, name: call.name, args: args!, type: "tool_call" }));
    out.invalid_tool_calls = parsed
      .filter((p) => p.args === null)
      .map(({ call }) => ({
        id: call.id,
        name: call.name,
        args: call.arguments,
        error: "arguments are not a JSON object",
        type: "invalid_tool_call",
      }));
    const providers = calls
      .filter((c) => c.providerMetadata)
      .map((c): [string, unknown] => [c.id, c.providerMetadata]);
    if (providers.length > 0) extra.provider_metadata = providers;
    const raw = parsed.filter(
      (p) =>
        p.args !== null && (JSON.stringify(p.args) !== p.call.arguments || holdsProtoKey(p.args)),
    );
    if (raw.length > 0)
      extra.raw_arguments = raw.map((p): [string, string] => [p.call.id, p.call.arguments]);
    const listed = [...out.tool_calls, ...out.invalid_tool_calls].map((c) => c.id);
    if (listed.some((callId, i) => callId !== calls[i]!.id))
      extra.call_order = calls.map((c) => c.id);
    if (message.reasoning?.length) extra.reasoning = message.reasoning;
    if (message.usage) {
      const { inputTokens, outputTokens, totalTokens } = message.usage;
      if (inputTokens === undefined || outputTokens === undefined || totalTokens === undefined)
        extra.usage = message.usage;
    }
    if (message.usage) {
      const { inputTokens = 0, outputTokens = 0 } = message.usage;
      out.usage_metadata = {
        input_tokens: inputTokens,
        output_tokens: outputTokens,
        total_tokens: message.usage.totalTokens ?? inputTokens + outputTokens,
      };
    }
  }
  if (message.role === "tool") {
    out.tool_call_id = message.toolCallId;
    out.status = message.isError ? "error" : "success";
  }
  const extras = (message as { langchain?: LcExtras }).langchain;
  if (extras?.name !== undefined) out.name = extras.name;
  if (extras?.response_metadata) out.response_metadata = extras.response_metadata;
  out.additional_kwargs = { ...extras?.additional_kwargs, tenxgraph: extra };
  return out;
}

function lcContent(content: Message["content"]): LcMessage["content"] {
  if (typeof content === "string") return content;
  return content.map((block) => {
    if (block.type === "text") return { type: "text", text: block.text };
    const source = {
      ...(block.url ? { url: block.url } : {}),
      ...(block.data ? { data: block.data } : {}),
      ...(block.mediaType ? { mime_type: block.mediaType } : {}),
    };
    if (block.type === "image") return { type: "image", ...source };
    return {
      type: "file",
      ...source,
      ...(block.filename ? { metadata: { filename: block.filename } } : {}),
    };
  });
}

/**
 * Whether an object holds a key named `__proto__` at any depth: LangChain's JSON copies objects
 * by assignment, which drops that key, so such arguments need their raw text to come back.
 */
function holdsProtoKey(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (Object.prototype.hasOwnProperty.call(value, "__proto__")) return true;
  return Object.values(value).some(holdsProtoKey);
}

/** The arguments as an object, or `null` when the model's text is not a JSON object. */
function parseArgs(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text === "" ? "{}" : text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

const ROLE_OF_TYPE: Record<string, Message["role"]> = {
  human: "user",
  user: "user",
  ai: "assistant",
  assistant: "assistant",
  AIMessageChunk: "assistant",
  tool: "tool",
  system: "system",
};

/**
 * A LangChain message (serialized, or the `{ role, content }` shorthand LangGraph accepts) as
 * ours. `where` names it in errors (`input.messages.0`). A missing id gets a fresh UUIDv7.
 */
export function fromLcMessage(input: unknown, where: string[]): Message {
  const raw = typeof input === "string" ? { type: "human", content: input } : input;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw badMessage(where, "a message is an object with a type (or role) and content");
  const m = raw as Record<string, unknown>;
  const kind = String(m.type ?? m.role ?? "");
  const role = ownValue(ROLE_OF_TYPE, kind);
  if (!role) throw badMessage([...where, "type"], `unknown message type '${kind}'`);
  const extra = kwargsOf(m);
  const id = typeof m.id === "string" && m.id.trim() !== "" ? m.id : uuidv7();
  const createdAt =
    typeof extra.created_at === "string" ? extra.created_at : new Date().toISOString();
  const content = ourContent(m.content, [...where, "content"]);
  return withExtras(ourMessage(m, { id, role, content, createdAt }, extra, where), m);
}

function ourMessage(
  m: Record<string, unknown>,
  base: Pick<Message, "id" | "role" | "content" | "createdAt">,
  extra: TenxgraphKwargs,
  where: string[],
): Message {
  const { id, role, content, createdAt } = base;
  if (role === "tool") return toolMessage(m, id, createdAt, content, where);
  if (role !== "assistant") return { id, role, content, createdAt };
  const toolCalls = toolCallsOf(m, extra, where);
  const reasoning = Array.isArray(extra.reasoning) ? extra.reasoning : undefined;
  const usage = extra.usage ?? usageOf(m.usage_metadata);
  return {
    id,
    role,
    content,
    createdAt,
    ...(toolCalls.length ? { toolCalls } : {}),
    ...(reasoning ? { reasoning: reasoning as never } : {}),
    ...(usage ? { usage } : {}),
  };
}

/** Keeps what LangChain's message had beyond ours (see {@link LcExtras}), when it had any. */
function withExtras(message: Message, m: Record<string, unknown>): Message {
  const extras: LcExtras = {};
  if (typeof m.name === "string") extras.name = m.name;
  const { tenxgraph: _ours, ...kwargs } = (m.additional_kwargs ?? {}) as Record<string, unknown>;
  if (Object.keys(kwargs).length > 0) extras.additional_kwargs = kwargs;
  const metadata = m.response_metadata as Record<string, unknown> | undefined;
  if (metadata && typeof metadata === "object" && Object.keys(metadata).length > 0)
    extras.response_metadata = metadata;
  return Object.keys(extras).length > 0 ? Object.assign(message, { langchain: extras }) : message;
}

function kwargsOf(m: Record<string, unknown>): TenxgraphKwargs {
  const kwargs = m.additional_kwargs as Record<string, unknown> | undefined;
  const ours = kwargs?.tenxgraph;
  return typeof ours === "object" && ours !== null ? (ours as TenxgraphKwargs) : {};
}

function toolMessage(
  m: Record<string, unknown>,
  id: string,
  createdAt: string,
  content: Message["content"],
  where: string[],
): Message {
  const callId = m.tool_call_id;
  if (typeof callId !== "string" || callId === "")
    throw badMessage([...where, "tool_call_id"], "a tool message needs its tool_call_id");
  return m.status === "error"
    ? { id, role: "tool", content, createdAt, toolCallId: callId, isError: true }
    : { id, role: "tool", content, createdAt, toolCallId: callId };
}

function toolCallsOf(
  m: Record<string, unknown>,
  extra: TenxgraphKwargs,
  where: string[],
): ToolCall[] {
  const calls: ToolCall[] = [];
  const listed = [
    ...(Array.isArray(m.tool_calls) ? m.tool_calls : []),
    ...(Array.isArray(m.invalid_tool_calls) ? m.invalid_tool_calls : []),
  ] as Record<string, unknown>[];
  for (const [i, call] of listed.entries()) {
    if (typeof call?.name !== "string" || call.name === "")
      throw badMessage([...where, "tool_calls", String(i), "name"], "a tool call needs a name");
    const callId = typeof call.id === "string" && call.id !== "" ? call.id : `call_${uuidv7()}`;
    const args =
      callValue(extra.raw_arguments, callId) ??
      (typeof call.args === "string" ? call.args : JSON.stringify(call.args ?? {}));
    const provider = callValue(extra.provider_metadata, callId) as ToolCall["providerMetadata"];
    calls.push({
      id: callId,
      name: call.name,
      arguments: args,
      ...(provider ? { providerMetadata: provider } : {}),
    });
  }
  const order = extra.call_order;
  if (!Array.isArray(order)) return calls;
  const rank = (call: ToolCall) => order.indexOf(call.id);
  return calls.sort((a, b) => rank(a) - rank(b));
}

/** Per-call values: `[callId, value]` pairs, or (as written before) an object keyed by call id. */
type CallPairs<T> = [string, T][] | Record<string, T>;

/** The value for `callId` in either shape. */
function callValue<T>(pairs: CallPairs<T> | undefined, callId: string): T | undefined {
  if (Array.isArray(pairs)) return pairs.find((pair) => pair[0] === callId)?.[1];
  return ownValue(pairs, callId);
}

/** `record[key]` when the record holds it: a call id may be any text (`constructor`). */
function ownValue<T>(record: Record<string, T> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

function usageOf(value: unknown) {
  if (typeof value !== "object" || value === null) return undefined;
  const u = value as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === "number" ? x : undefined);
  return {
    ...(num(u.input_tokens) === undefined ? {} : { inputTokens: num(u.input_tokens)! }),
    ...(num(u.output_tokens) === undefined ? {} : { outputTokens: num(u.output_tokens)! }),
    ...(num(u.total_tokens) === undefined ? {} : { totalTokens: num(u.total_tokens)! }),
  };
}

function ourContent(value: unknown, where: string[]): Message["content"] {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  if (!Array.isArray(value)) throw badMessage(where, "content is a string or a list of blocks");
  const blocks: ContentBlock[] = [];
  for (const [i, item] of value.entries()) {
    const block =
      typeof item === "string" ? { type: "text", text: item } : (item as Record<string, unknown>);
    const at = [...where, String(i)];
    if (block.type === "text" && typeof block.text === "string")
      blocks.push({ type: "text", text: block.text });
    else if (block.type === "image_url") blocks.push(imageUrlBlock(block.image_url, at));
    else if (block.type === "image" || block.type === "file") blocks.push(mediaBlock(block, at));
    else if (block.type === "tool_use" || block.type === "thinking" || block.type === "reasoning")
      continue; // a provider's own blocks: the call or the reasoning has its own field
    else throw badMessage(at, `unsupported content block type '${String(block.type)}'`);
  }
  return blocks;
}

function imageUrlBlock(value: unknown, where: string[]): ContentBlock {
  const url = typeof value === "string" ? value : (value as { url?: unknown } | null)?.url;
  if (typeof url !== "string") throw badMessage(where, "an image_url block needs a url");
  const data = /^data:([^;]+);base64,(.*)$/.exec(url);
  return data ? { type: "image", mediaType: data[1]!, data: data[2]! } : { type: "image", url };
}

function mediaBlock(block: Record<string, unknown>, where: string[]): ContentBlock {
  const url = typeof block.url === "string" ? block.url : undefined;
  const data =
    typeof block.data === "string"
      ? block.data
      : typeof block.base64 === "string"
        ? block.base64
        : undefined;
  if (!url && !data) throw badMessage(where, `a ${String(block.type)} block needs url or data`);
  const mime = block.mime_type ?? block.mimeType;
  const mediaType = typeof mime === "string" ? mime : undefined;
  if (block.type === "image")
    return {
      type: "image",
      ...(url ? { url } : {}),
      ...(data ? { data } : {}),
      ...(mediaType ? { mediaType } : {}),
    };
  const filename = (block.metadata as { filename?: unknown } | undefined)?.filename;
  return {
    type: "file",
    ...(url ? { url } : {}),
    ...(data ? { data } : {}),
    mediaType: mediaType ?? "application/octet-stream",
    ...(typeof filename === "string" ? { filename } : {}),
  };
}

function badMessage(where: string[], msg: string): LcMessageError {
  return new LcMessageError(where, msg);
}
