import { isTenxgraphError, type Message } from "@tenxgraph/core";
import { fromLcMessage, type LcMessageError } from "@tenxgraph/core/interop";
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
    if (!isTenxgraphError(error, "INPUT_001") || !("loc" in error)) throw error;
    const { loc, detail, message } = error as LcMessageError;
    throw new ApiError(422, "VALIDATION_ERROR", message, [
      { loc, msg: detail, type: "value_error" },
    ]);
  }
}
