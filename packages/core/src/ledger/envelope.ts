import { messageSchema, type ToolMessage } from "../messages/message.js";
import { toToolMessage } from "../tools/tool-result.js";

/**
 * How a result is stored in the ledger. `message` holds the tool message the model saw; `raw`
 * any other value (turned into a tool message on replay). `stateChanges` are the state fields
 * the call changed, re-applied when the call is replayed. `origin` is the
 * `<message id>:<call id>` of the call that produced the result.
 */
export type ResultEnvelope =
  | {
      __kind__: "message";
      value: ToolMessage;
      stateChanges?: Record<string, unknown>;
      origin?: string;
    }
  | { __kind__: "raw"; value: unknown; stateChanges?: Record<string, unknown>; origin?: string };

/** The envelope of a tool message result, with the state changes and the call that made it. */
export function messageEnvelope(
  message: ToolMessage,
  stateChanges: Record<string, unknown>,
  origin?: string | null,
): ResultEnvelope {
  const envelope: ResultEnvelope = { __kind__: "message", value: message };
  if (Object.keys(stateChanges).length > 0) envelope.stateChanges = stateChanges;
  if (origin) envelope.origin = origin;
  return envelope;
}

/** A recorded result ready to replay for the call `toolCallId`. */
export interface ReplayedResult {
  message: ToolMessage;
  stateChanges: Record<string, unknown>;
  /** The call that produced it, when recorded. */
  origin?: string;
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
  const origin = typeof envelope.origin === "string" ? { origin: envelope.origin } : {};
  if (envelope.__kind__ === "raw" && "value" in envelope) {
    return { message: toToolMessage(envelope.value, toolCallId), stateChanges: changes, ...origin };
  }
  if (envelope.__kind__ !== "message") return null;
  const parsed = messageSchema.safeParse(envelope.value);
  if (!parsed.success || parsed.data.role !== "tool") return null;
  const message = parsed.data;
  // A domain key can be shared by calls of different turns: the recorded fact is replayed as
  // a new message answering the call that asks now.
  if (message.toolCallId !== toolCallId) {
    return { message: toToolMessage(message, toolCallId), stateChanges: changes, ...origin };
  }
  return { message, stateChanges: changes, ...origin };
}
