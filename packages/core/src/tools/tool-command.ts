import { ToolError } from "../errors/errors.js";
import { Command } from "../definition/command.js";
import { Send, isSend } from "../definition/send.js";
import type { RecordedGoto } from "../ledger/envelope.js";
import type { ToolMessage } from "../messages/message.js";
import { toToolMessage } from "../messages/tool-result.js";
import { findNonJson } from "../storage/json-check.js";
import type { CallUpdates } from "./call-updates.js";

/**
 * A tool's `new Command({ update, goto? })` as a result: the update's fields go to `updates`
 * (as `ctx.update` would take them: recorded with the result, applied again on a replay, never
 * re-running the tool), its one tool message answering this call is the call's message, and
 * `goto` (nodes, `END`, `Send`s) is recorded with them: the tool node goes there too, as
 * LangGraph.js's `ToolNode` does, besides its edges. With `graph: Command.PARENT` (a handoff,
 * inside a subgraph), `goto` names nodes of the parent graph, and the tool node hands off. Anything else is refused with
 * `TOOL_COMMAND_001`, which the call records as its failure.
 */
export function commandResult(
  command: Command<unknown>,
  tool: string,
  toolCallId: string,
  updates: CallUpdates,
): { message: ToolMessage; goto: RecordedGoto } {
  const refuse = (why: string) =>
    new ToolError("TOOL_COMMAND_001", tool, `Tool '${tool}' returned a Command ${why}`);
  const extra = ["resume", "interruptId"].filter((key) => Object.hasOwn(command, key));
  if (extra.length > 0) {
    throw refuse(
      `with ${extra.join(", ")}: a tool's Command carries 'update' and 'goto' (resume is a ` +
        `run's input)`,
    );
  }
  const goto =
    command.graph === Command.PARENT ? parentGoto(command.goto) : recordedGoto(command.goto);
  if (typeof goto === "string") throw refuse(goto);
  if (command.graph !== undefined && command.graph !== Command.PARENT) {
    throw refuse("whose graph is not Command.PARENT");
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
  return { message: toToolMessage(message, toolCallId), goto };
}

/** `goto` as the ledger keeps it, or why it cannot be kept. */
function recordedGoto(goto: Command["goto"]): RecordedGoto | string {
  if (goto === undefined) return [];
  const recorded: RecordedGoto = [];
  for (const target of Array.isArray(goto) ? goto : [goto]) {
    if (typeof target === "string" && target !== "") recorded.push(target);
    else if (isSend(target)) {
      const problem = findNonJson(target.input, "input");
      if (problem) return `whose goto Send('${target.node}') cannot be recorded: ${problem}`;
      recorded.push({ send: target.node, input: JSON.parse(JSON.stringify(target.input)) });
    } else return "whose goto is not a node name, END, a Send or a list of them";
  }
  return recorded;
}

/** A handoff's `goto` (`Command.PARENT`) as the ledger keeps it, or why it cannot be kept. */
function parentGoto(goto: Command["goto"]): RecordedGoto | string {
  const targets = goto === undefined ? [] : Array.isArray(goto) ? goto : [goto];
  if (targets.length === 0 || !targets.every((target) => typeof target === "string" && target)) {
    return "with graph: Command.PARENT whose goto is not a node name of the parent or a list of them";
  }
  return (targets as string[]).map((parent) => ({ parent }));
}

/** A recorded `goto` as a `Command`'s again: in this graph, and (a handoff) in the parent's. */
export function gotoOf(recorded: RecordedGoto): {
  goto: (string | Send<unknown>)[];
  parent: string[];
} {
  const goto: (string | Send<unknown>)[] = [];
  const parent: string[] = [];
  for (const target of recorded) {
    if (typeof target === "string") goto.push(target);
    else if ("parent" in target) parent.push(target.parent);
    else goto.push(new Send(target.send, target.input));
  }
  return { goto, parent };
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
