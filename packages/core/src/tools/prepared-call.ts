import { errorText } from "../errors/errors.js";
import { withFields } from "../events/logger.js";
import type { ToolCall, ToolMessage } from "../messages/message.js";
import type { LedgerCall } from "../ledger/ledger-call.js";
import { argsDigest } from "../ledger/args-digest.js";
import { domainLedgerKey, ledgerKey } from "../ledger/ledger-key.js";
import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import type { AnyTool } from "./tool.js";
import { toolErrorMessage } from "../messages/tool-result.js";

/** A call checked and keyed before any ledger work: ready to run, or already answered with an error. */
export type PreparedCall = ReadyCall | RejectedCall;

/** A call that passed its checks and is ready for the ledger: a {@link LedgerCall} with its tool. */
export interface ReadyCall extends LedgerCall {
  ok: true;
  call: ToolCall;
  tool: AnyTool;
  /** The assistant message that issued the call. */
  messageId: string;
  idempotencyKey: string;
  /** Prefix of the ids of interrupts raised by this call: derived from the call, never from order. */
  interruptBase: string;
}

/** Unknown tool or bad arguments: deterministic, no side effect, so never ledgered. */
export interface RejectedCall {
  ok: false;
  call: ToolCall;
  /** Why: `TOOL_NOT_FOUND_001`, `TOOL_ARGS_001` or `TOOL_ERROR_001` (its span's `error.type`). */
  code: RejectionCode;
  message: ToolMessage;
}

/** The codes a call is refused with before the ledger. */
export type RejectionCode = Parameters<typeof toolErrorMessage>[2];

/**
 * The model's arguments parsed and checked against the tool's schema, or what is wrong with
 * them, in words the model can act on.
 */
export function parseArguments(
  call: ToolCall,
  tool: AnyTool,
): { ok: true; args: unknown } | { ok: false; problem: string } {
  let json: unknown;
  try {
    json = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return { ok: false, problem: `arguments are not valid JSON (${errorText(error)})` };
  }
  const parsed = tool.schema.safeParse(json);
  if (parsed.success) return { ok: true, args: parsed.data };
  const issues = parsed.error.issues
    .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
    .join("; ");
  return { ok: false, problem: `arguments do not match the schema: ${issues}` };
}

/**
 * `<message id>:<call id>` in the branch's namespace, the call's own ledger key (`null` when a
 * part is missing). A call id shared with another call of the message gets the call's position too.
 */
export function callOrigin(
  messageId: string,
  call: ToolCall,
  index: number,
  sharedId: boolean,
  namespace: string,
): string | null {
  return ledgerKey(messageId, sharedId ? `${call.id}#${index}` : call.id, namespace);
}

/**
 * Finds the tool, parses and validates the model's arguments, and derives the call's keys.
 * Malformed JSON and schema failures become `TOOL_ARGS_001` messages the model can correct.
 */
export function prepareCall(
  call: ToolCall,
  /** The call's position in its message. */
  index: number,
  messageId: string,
  tools: ReadonlyMap<string, AnyTool>,
  ctx: NodeContext,
  /** The call's id is used by another call of the same message. */
  sharedId = false,
): PreparedCall {
  // A call made before a migration renamed its tool runs the tool that replaces it.
  const tool = tools.get(call.name) ?? tools.get(ctx.runtime.toolRenames.get(call.name) ?? "");
  if (!tool) {
    const known = [...tools.keys()].join(", ");
    return reject(call, "TOOL_NOT_FOUND_001", `no tool named '${call.name}' (tools: ${known})`);
  }
  const parsed = parseArguments(call, tool);
  if (!parsed.ok) return reject(call, "TOOL_ARGS_001", parsed.problem);
  const log = withFields(ctx.logger, { toolCallId: call.id, tool: call.name });
  if (sharedId) {
    log.warn(
      { toolCallId: call.id },
      "Several calls of one message share this id: keyed by position",
    );
  }
  const origin = callOrigin(messageId, call, index, sharedId, ctx.runtime.ledgerNamespace);
  let key = origin;
  let domainKey: string | null = null;
  if (tool.idempotencyKey) {
    try {
      domainKey = tool.idempotencyKey(parsed.args);
    } catch (error) {
      return reject(call, "TOOL_ERROR_001", `idempotencyKey(args) threw: ${errorText(error)}`);
    }
    // A missing domain key would make every call of the tool share one ledger entry.
    if (typeof domainKey !== "string" || domainKey === "") {
      const got = domainKey === "" ? "an empty string" : String(domainKey);
      return reject(
        call,
        "TOOL_ERROR_001",
        `idempotencyKey(args) must return a non-empty string, got ${got}`,
      );
    }
    // A call made under a former name (before a migration renamed its tool) keeps that name's
    // key: a worker of either version, running it at once or one after the other during a
    // rolling deploy, claims the one entry, so the fact cannot be recorded twice.
    key = domainLedgerKey(call.name, domainKey);
  }
  if (key === null) {
    log.warn(
      { toolCallId: call.id, tool: call.name },
      "Tool call has no message id or call id: the ledger is skipped and it runs at least once",
    );
  }
  return {
    ok: true,
    call,
    tool,
    args: parsed.args,
    messageId,
    origin,
    argsDigest: argsDigest(call.arguments),
    key,
    unscopedKey: domainKey,
    // The name it was made under: its tool's, or a former one (see the key above).
    recordedToolName: call.name,
    // The tool gets the domain key it declared, unscoped: it is what the provider knows.
    // Without a key the call's place (node, step, position) is what stays the same on replay.
    idempotencyKey: domainKey ?? key ?? `${ctx.threadId}:${ctx.node}:${ctx.step}:${index}`,
    interruptBase: origin ?? `${ctx.node}:${ctx.step}:${index}`,
    log,
  };

  function reject(call: ToolCall, code: RejectionCode, message: string): RejectedCall {
    return { ok: false, call, code, message: toolErrorMessage(call.name, call.id, code, message) };
  }
}
