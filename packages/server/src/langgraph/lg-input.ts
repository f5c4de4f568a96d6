import type { Message } from "@tenxgraph/core";
import { fromLcMessage } from "./lc-messages.js";
import { unsupported } from "./lg-http.js";
import { HIDDEN_FIELDS } from "./lg-values.js";

/** A state update's values as ours: messages from LangChain's shape; our hidden fields refused. */
export function ourUpdate(
  values: Record<string, unknown>,
  where: string[] = ["body", "values"],
): { update: Record<string, unknown>; added: Message[] } {
  const update: Record<string, unknown> = {};
  let added: Message[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (HIDDEN_FIELDS.has(key)) throw unsupported([...where, key], "a field of the server's own");
    if (key !== "messages") update[key] = value;
  }
  if (values.messages !== undefined) {
    const list = Array.isArray(values.messages) ? values.messages : [values.messages];
    added = list.map((m, i) => fromLcMessage(m, [...where, "messages", String(i)]));
    update.messages = added;
  }
  return { update, added };
}
