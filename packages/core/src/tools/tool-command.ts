import { ToolError } from "../errors/errors.js";
import type { Command } from "../definition/command.js";
import type { ToolMessage } from "../messages/message.js";
import { toToolMessage } from "../messages/tool-result.js";
import type { CallUpdates } from "./call-updates.js";

/**
 * A tool's `new Command({ update })` as a result: the update's fields go to `updates` (as
 * `ctx.update` would take them: recorded with the result, applied again on a replay, never
 * re-running the tool), and its one tool message answering this call is the call's message.
 * Anything else is refused with `TOOL_COMMAND_001`, which the call records as its failure.
 */
export function commandResult(
  command: Command<unknown>,
  tool: string,
  toolCallId: string,
  updates: CallUpdates,
): ToolMessage {
  const refuse = (why: string) =>
    new ToolError("TOOL_COMMAND_001", tool, `Tool '${tool}' returned a Command ${why}`);
  const extra = ["goto", "resume", "interruptId"].filter((key) => Object.hasOwn(command, key));
  if (extra.length > 0) {
    throw refuse(
      `with ${extra.join(", ")}: a tool's Command may only carry 'update' (route with the ` +
        `graph's edges after the tool node)`,
    );
  }
  const update = command.update;
  if (typeof update !== "object" || update === null || Array.isArray(update)) {
    throw refuse("without an update object: new Command({ update: { field: value, messages } })");
  }
  const { messages, ...fields } = update as Record<string, unknown>;
  const message = answerOf(messages, toolCallId);
  if (!message) {
    throw refuse(
      `whose update.messages is not exactly one tool message answering this call: ` +
        `messages: [Message.tool(ctx.toolCallId, "…")] (the transcript grows only by the ` +
        `call's result; return other messages from a node)`,
    );
  }
  if (Object.keys(fields).length > 0) updates.add(fields);
  return toToolMessage(message, toolCallId);
}

/** The one tool message of `messages` for `toolCallId` (LangGraph's `tool_call_id` too), or null. */
function answerOf(messages: unknown, toolCallId: string): { content: unknown } | null {
  if (!Array.isArray(messages) || messages.length !== 1) return null;
  const message = messages[0] as Record<string, unknown> | null;
  if (typeof message !== "object" || message === null || message.role !== "tool") return null;
  if (typeof message.content !== "string" && !Array.isArray(message.content)) return null;
  const answers = message.toolCallId ?? message.tool_call_id;
  return answers === undefined || answers === toolCallId ? (message as { content: unknown }) : null;
}
