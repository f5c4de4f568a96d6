import {
  AIMessage,
  BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type AIMessageFields,
} from "@langchain/core/messages";
import type { Message } from "@tenxgraph/core";
import { fromLcMessage, toLcMessage, type LcMessage } from "@tenxgraph/core/interop";

/**
 * Our message as LangChain's: `HumanMessage`, `AIMessage` (tool calls with their ids, usage),
 * `ToolMessage` (`tool_call_id`, `status`) or `SystemMessage`. What LangChain has no field for
 * (the time, the model's reasoning, each call's provider data) rides in
 * `additional_kwargs.tenxgraph`, as on the server's LangGraph API, so {@link fromLangChain}
 * gives the same message back.
 */
export function toLangChain(message: Message): BaseMessage {
  const lc = toLcMessage(message);
  const common = {
    id: lc.id,
    content: lc.content as AIMessageFields["content"],
    additional_kwargs: lc.additional_kwargs,
    response_metadata: lc.response_metadata,
    ...(lc.name !== undefined && { name: lc.name }),
  };
  switch (lc.type) {
    case "human":
      return new HumanMessage(common);
    case "system":
      return new SystemMessage(common);
    case "tool":
      return new ToolMessage({ ...common, tool_call_id: lc.tool_call_id!, status: lc.status! });
    case "ai":
      return new AIMessage({
        ...common,
        tool_calls: lc.tool_calls ?? [],
        invalid_tool_calls: lc.invalid_tool_calls ?? [],
        ...(lc.usage_metadata && { usage_metadata: lc.usage_metadata }),
      });
  }
}

/** Our transcript as LangChain's messages. */
export function toLangChainMessages(messages: readonly Message[]): BaseMessage[] {
  return messages.map(toLangChain);
}

/**
 * A LangChain message as ours: a message object (`new HumanMessage("hi")`, an `AIMessage`
 * with `tool_calls`, a chunk), its serialized forms (`{ lc: 1, type: "constructor", ... }`,
 * `{ type: "human", content }`), or the `{ role, content }` shorthand. A message without an id
 * gets a fresh one. `where` names it in errors (default `message`). Bad input throws
 * `LcMessageError` (`INPUT_001`) naming the part.
 */
export function fromLangChain(message: unknown, where: string[] = ["message"]): Message {
  return fromLcMessage(serialized(message), where);
}

/** LangChain's messages as ours; errors name the index (`messages.2.content`). */
export function fromLangChainMessages(messages: readonly unknown[], where = ["messages"]) {
  return messages.map((m, i) => fromLangChain(m, [...where, String(i)]));
}

/** A message object, or LangChain's constructor JSON, as the serialized shape core reads. */
function serialized(message: unknown): unknown {
  if (BaseMessage.isInstance(message)) return fieldsOf(message);
  if (isConstructorJson(message)) {
    const className = message.id.at(-1) ?? "";
    const kwargs = unescaped(message.kwargs) as Record<string, unknown>;
    return { ...kwargs, type: TYPE_OF_CLASS[className] ?? className };
  }
  return message;
}

const LC_ESCAPED = "__lc_escaped__";

/**
 * LangChain's JSON wraps a plain object that has an `lc` key (a call's arguments, say) as
 * `{ __lc_escaped__: object }`, so it cannot pass for a serialized class; its `load()` unwraps
 * it, and so must we, or the wrapper would become part of the user's data.
 */
function unescaped(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unescaped);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && keys[0] === LC_ESCAPED) return record[LC_ESCAPED];
  return Object.fromEntries(keys.map((key) => [key, unescaped(record[key])]));
}

const TYPE_OF_CLASS: Record<string, LcMessage["type"]> = {
  HumanMessage: "human",
  HumanMessageChunk: "human",
  AIMessage: "ai",
  AIMessageChunk: "ai",
  ToolMessage: "tool",
  ToolMessageChunk: "tool",
  SystemMessage: "system",
  SystemMessageChunk: "system",
};

interface ConstructorJson {
  lc: 1;
  type: "constructor";
  id: string[];
  kwargs: Record<string, unknown>;
}

function isConstructorJson(value: unknown): value is ConstructorJson {
  const v = value as Partial<ConstructorJson> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    v.lc === 1 &&
    v.type === "constructor" &&
    Array.isArray(v.id) &&
    typeof v.kwargs === "object" &&
    v.kwargs !== null
  );
}

/** The fields of a message object, by its type; tool calls as parsed (chunks collapse them). */
function fieldsOf(message: BaseMessage): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    type: message.type,
    id: message.id,
    content: message.content,
    name: message.name,
    additional_kwargs: message.additional_kwargs,
    response_metadata: message.response_metadata,
  };
  if (AIMessage.isInstance(message)) {
    fields.tool_calls = message.tool_calls;
    fields.invalid_tool_calls = message.invalid_tool_calls;
    fields.usage_metadata = message.usage_metadata;
  }
  if (ToolMessage.isInstance(message)) {
    fields.tool_call_id = message.tool_call_id;
    fields.status = message.status;
  }
  return fields;
}
