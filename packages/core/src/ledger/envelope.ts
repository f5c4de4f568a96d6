import { messageSchema, type ToolMessage } from "../messages/message.js";
import { toToolMessage } from "../messages/tool-result.js";

/**
 * How a result is stored in the ledger. `message` holds the tool message the model saw; `raw`
 * any other value (turned into a tool message on replay). `stateChanges` are the state fields
 * the call changed in its copy (whole values), and `updates` the updates it made with
 * `ctx.update`, in order; both are applied again when the call is replayed. `origin` is the
 * `<message id>:<call id>` of the call that produced the result, `argsDigest` the digest of
 * the arguments it ran with (see `argsDigest`); `errorCode` the code of a failed call's message.
 */
export type ResultEnvelope = (
  { __kind__: "message"; value: ToolMessage } | { __kind__: "raw"; value: unknown }
) & {
  stateChanges?: Record<string, unknown>;
  updates?: Record<string, unknown>[];
  goto?: RecordedGoto;
  origin?: string;
  argsDigest?: string;
  errorCode?: string;
};

/**
 * Where a tool's `Command` sent the run (`goto`), as the ledger keeps it: node names (or
 * `END`), `Send`s as `{ send, input }`, and a handoff's nodes of the parent graph as
 * `{ parent }` (`Command.PARENT`). A replayed call sends the run there again.
 */
export type RecordedGoto = (string | { send: string; input: unknown } | { parent: string })[];

/**
 * The envelope of a tool message result, with the state it wrote and the call that made it
 * (its origin and the digest of its arguments).
 */
export function messageEnvelope(
  message: ToolMessage,
  stateChanges: Record<string, unknown>,
  origin?: string | null,
  errorCode?: string | null,
  updates: readonly Record<string, unknown>[] = [],
  argsDigest?: string | null,
  goto: RecordedGoto = [],
): ResultEnvelope {
  const envelope: ResultEnvelope = { __kind__: "message", value: message };
  if (Object.keys(stateChanges).length > 0) envelope.stateChanges = stateChanges;
  if (updates.length > 0) envelope.updates = [...updates];
  if (goto.length > 0) envelope.goto = [...goto];
  if (origin) envelope.origin = origin;
  if (argsDigest) envelope.argsDigest = argsDigest;
  if (errorCode) envelope.errorCode = errorCode;
  return envelope;
}

/** A recorded result ready to replay for the call `toolCallId`. */
export interface ReplayedResult {
  message: ToolMessage;
  stateChanges: Record<string, unknown>;
  /** The call's `ctx.update` updates, in order, when it made some (envelopes before them have none). */
  updates?: Record<string, unknown>[];
  /** Where the call's `Command` sent the run, when it did. */
  goto?: RecordedGoto;
  /** The call that produced it, when recorded. */
  origin?: string;
  /** The digest of the arguments it ran with, when recorded (results recorded before have none). */
  argsDigest?: string;
  /** The code of a failed call's message, when recorded. */
  errorCode?: string;
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
  const updates = envelope.updates;
  if (updates !== undefined && !(Array.isArray(updates) && updates.every(isRecord))) return null;
  const goto = envelope.goto;
  if (goto !== undefined && !(Array.isArray(goto) && goto.every(isGotoTarget))) return null;
  const extra = {
    stateChanges: stateChanges as Record<string, unknown>,
    ...(updates !== undefined ? { updates: updates as Record<string, unknown>[] } : {}),
    ...(goto !== undefined ? { goto: goto as RecordedGoto } : {}),
    ...(typeof envelope.origin === "string" ? { origin: envelope.origin } : {}),
    ...(typeof envelope.argsDigest === "string" ? { argsDigest: envelope.argsDigest } : {}),
    ...(typeof envelope.errorCode === "string" ? { errorCode: envelope.errorCode } : {}),
  };
  if (envelope.__kind__ === "raw" && "value" in envelope) {
    return { message: toToolMessage(envelope.value, toolCallId), ...extra };
  }
  if (envelope.__kind__ !== "message") return null;
  const parsed = messageSchema.safeParse(envelope.value);
  if (!parsed.success || parsed.data.role !== "tool") return null;
  const message = parsed.data;
  // A domain key can be shared by calls of different turns: the recorded fact is replayed as
  // a new message answering the call that asks now.
  if (message.toolCallId !== toolCallId) {
    return { message: toToolMessage(message, toolCallId), ...extra };
  }
  return { message, ...extra };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isGotoTarget(value: unknown): boolean {
  return (
    typeof value === "string" ||
    (isRecord(value) && (typeof value.send === "string" || typeof value.parent === "string"))
  );
}
