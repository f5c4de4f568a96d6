import { messageSchema, type ToolMessage } from "../messages/message.js";
import { toToolMessage } from "../tools/tool-result.js";

/**
 * How a result is stored in the ledger. `message` holds the tool message the model saw; `raw`
 * any other value (turned into a tool message on replay). `stateChanges` are the state fields
 * the call changed, re-applied when the call is replayed.
 */
export type ResultEnvelope =
  | { __kind__: "message"; value: ToolMessage; stateChanges?: Record<string, unknown> }
  | { __kind__: "raw"; value: unknown; stateChanges?: Record<string, unknown> };

export function messageEnvelope(
  message: ToolMessage,
  stateChanges: Record<string, unknown>,
): ResultEnvelope {
  return Object.keys(stateChanges).length > 0
    ? { __kind__: "message", value: message, stateChanges }
    : { __kind__: "message", value: message };
}

/** A recorded result ready to replay for the call `toolCallId`. */
export interface ReplayedResult {
  message: ToolMessage;
  stateChanges: Record<string, unknown>;
}

/**
 * Reads a stored result back. Anything that is not a well-formed envelope returns `null`, which
 * the caller treats as "no record" and runs the tool: running a tool again is recoverable,
 * skipping it because a row was misread is not.
 */
export function decodeEnvelope(stored: unknown, toolCallId: string): ReplayedResult | null {
  if (typeof stored !== "object" || stored === null || Array.isArray(stored)) return null;
  const envelope = stored as Record<string, unknown>;
  const stateChanges = envelope.stateChanges ?? {};
  if (typeof stateChanges !== "object" || stateChanges === null || Array.isArray(stateChanges)) {
    return null;
  }
  const changes = stateChanges as Record<string, unknown>;
  if (envelope.__kind__ === "raw" && "value" in envelope) {
    return { message: toToolMessage(envelope.value, toolCallId), stateChanges: changes };
  }
  if (envelope.__kind__ !== "message") return null;
  const parsed = messageSchema.safeParse(envelope.value);
  if (!parsed.success || parsed.data.role !== "tool") return null;
  const message = parsed.data;
  // A domain key can be shared by calls of different turns: the recorded fact is replayed as
  // a new message answering the call that asks now.
  if (message.toolCallId !== toolCallId) {
    return { message: toToolMessage(message, toolCallId), stateChanges: changes };
  }
  return { message, stateChanges: changes };
}
