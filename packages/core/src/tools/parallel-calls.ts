import type { Message } from "../messages/message.js";
import type { BaseState } from "../definition/reducers.js";
import type { BranchWriters } from "../definition/branch-merge.js";
import { deepCopy } from "../definition/state-copy.js";

/**
 * A private copy of the state for one tool call, its fields deep-copied. The transcript is not
 * the node's array but `transcript`, a copy the node's calls may share (its messages are
 * immutable, and one copy per call made a long thread's tool step copy it once per call), so a
 * tool pushing into `ctx.state.messages` changes nothing of the node's state.
 */
export function branchState<S extends BaseState>(
  state: S,
  baseline: Record<string, unknown>,
  transcript: Message[] = state.messages.slice(),
): S {
  return { ...deepCopy(baseline), messages: transcript } as unknown as S;
}

/** The writers of a tool node's parallel calls. */
export const TOOL_CALL_WRITERS: BranchWriters = {
  who: "Parallel tool calls",
  copies: "ctx.state",
  order: "call order",
  idsField: "toolCallIds",
  throughReducer: "write it with ctx.update(...) so every call's update goes through it",
};
