import { Message, type MessageUpdate } from "@tenxgraph/core";
import { fromLangChain } from "./convert-messages.js";

/**
 * A graph input whose `messages` are LangChain's (`new HumanMessage("hi")`, their serialized
 * forms, `{ role, content }`) with the messages made ours, every other field as it is:
 * `graph.invoke(langchainInput({ messages: [new HumanMessage("hi")] }), config)`. Our messages
 * and removals in the list pass unchanged. Bad input throws `INPUT_001` naming the message
 * (`input.messages.1.tool_call_id`) before the graph is asked.
 */
export function langchainInput<I extends { messages?: unknown }>(
  input: I,
): Omit<I, "messages"> & { messages?: MessageUpdate[] } {
  if (input.messages === undefined) return input as Omit<I, "messages">;
  const list: unknown[] = Array.isArray(input.messages) ? input.messages : [input.messages];
  const messages = list.map((m, i) =>
    Message.isRemoval(m) || Message.is(m) ? m : fromLangChain(m, ["input", "messages", String(i)]),
  );
  return { ...input, messages };
}
