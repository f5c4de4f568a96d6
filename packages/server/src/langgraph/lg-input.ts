import type { Message } from "@tenxgraph/core";
import { LcMessageError, fromLcMessage } from "@tenxgraph/core/interop";
import { ApiError } from "../http/api-error.js";
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
    added = list.map((m, i) => ourMessage(m, [...where, "messages", String(i)]));
    update.messages = added;
  }
  return { update, added };
}

/** A LangChain message as ours; one that cannot be is the request's 422, naming its part. */
function ourMessage(message: unknown, where: string[]): Message {
  try {
    return fromLcMessage(message, where);
  } catch (error) {
    if (!(error instanceof LcMessageError)) throw error;
    throw new ApiError(422, "VALIDATION_ERROR", error.message, [
      { loc: error.loc, msg: error.detail, type: "value_error" },
    ]);
  }
}
