/**
 * A node's return value made a state update, checked before anything is written: messages are
 * messages or removals of messages the transcript holds.
 */
import { GraphValidationError, NodeOutputError } from "../errors/errors.js";
import { Command, isCommand, type Goto } from "../definition/command.js";
import type { NodeOutput } from "../definition/graph-node.js";
import { appendMessages, type BaseState, type StateUpdate } from "../definition/reducers.js";
import { Message, isPlainMessage, messageSchema, type MessageUpdate } from "../messages/message.js";

/**
 * A node's output as an update, and where a `Command` it returned said to go: in this graph
 * (`goto`), or in the parent graph (`handoff`, for `graph: Command.PARENT`).
 */
export function toUpdate<S extends BaseState>(
  output: NodeOutput<S>,
  node: string,
): { update: StateUpdate<S>; goto: Goto | undefined; handoff: string[] | undefined } {
  if (!isCommand(output))
    return { update: asUpdate(output, node), goto: undefined, handoff: undefined };
  const update = asUpdate(output.update as NodeOutput<S>, node);
  if (output.graph === undefined) return { update, goto: output.goto, handoff: undefined };
  if (output.graph !== Command.PARENT) {
    throw new NodeOutputError(node, `returned a Command whose graph is not Command.PARENT`);
  }
  return { update, goto: undefined, handoff: parentTargets(output.goto, node) };
}

/** A handoff's `goto`: one or more node names of the parent graph (recorded with the step). */
function parentTargets(goto: Goto | undefined, node: string): string[] {
  const targets = goto === undefined ? [] : Array.isArray(goto) ? goto : [goto];
  if (targets.length === 0 || !targets.every((target) => typeof target === "string" && target)) {
    throw new GraphValidationError(
      "GRAPH_011",
      `Node '${node}' handed off to the parent graph without a goto of node names ` +
        `(new Command({ graph: Command.PARENT, goto: "agent" }))`,
    );
  }
  return [...new Set(targets as string[])];
}

function asUpdate<S extends BaseState>(output: NodeOutput<S>, node: string): StateUpdate<S> {
  if (output === undefined || output === null) return {};
  let update: StateUpdate<S>;
  if (Array.isArray(output)) update = { messages: output } as StateUpdate<S>;
  else if (isMessageLike(output)) update = { messages: [output] } as StateUpdate<S>;
  else if (typeof output === "object" && !isCommand(output)) update = output as StateUpdate<S>;
  else {
    throw new NodeOutputError(
      node,
      `returned ${isCommand(output) ? "a Command as a Command's update" : typeof output}: return a state update, a message, messages, a Command, or nothing`,
    );
  }
  requireValidMessages(update.messages, node);
  return update;
}

/** Messages are checked before they reach the store, where a bad one would spoil the thread. */
function requireValidMessages(messages: unknown, node: string): void {
  if (messages === undefined) return;
  if (!Array.isArray(messages)) {
    throw new NodeOutputError(node, `returned messages that are not an array of messages`);
  }
  messages.forEach((message, index) => {
    if (isPlainMessage(message) || Message.isRemoval(message)) return;
    const parsed = messageSchema.safeParse(message);
    if (parsed.success) return;
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at '${issue.path.join(".")}'` : "";
    throw new NodeOutputError(
      node,
      `returned an invalid message [${index}]${where}: ${issue?.message ?? "not a message"}`,
    );
  });
}

/**
 * A removal of a message the transcript does not hold is the node's mistake, and is refused as
 * one before anything is written. Only an update that removes pays for the check.
 */
export function requireKnownRemovals(
  transcript: readonly Message[],
  messages: readonly MessageUpdate[] | undefined,
  node: string,
): void {
  if (!messages?.some((message) => Message.isRemoval(message))) return;
  try {
    appendMessages(transcript as Message[], messages);
  } catch (error) {
    throw new NodeOutputError(node, `returned ${(error as Error).message}`);
  }
}

function isMessageLike(value: unknown): value is Message {
  const v = value as Partial<Message> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.id === "string" &&
    typeof v.role === "string" &&
    typeof v.createdAt === "string" &&
    "content" in v
  );
}
