import { NodeOutputError } from "../errors/errors.js";
import type { BaseState } from "../definition/reducers.js";
import type { Message } from "../messages/message.js";
import { findNonJson } from "../storage/json-check.js";
import { keepsPrefix } from "./transcript-change.js";

/** The transcript only grows: a node that edited or dropped earlier messages of its copy is refused. */
export function requireAppendOnly(
  before: readonly Message[],
  after: readonly Message[],
  node: string,
) {
  if (keepsPrefix(before, after)) return;
  throw new NodeOutputError(
    node,
    `changed earlier messages of its state in place; the transcript is ` +
      `append-only (trim a copy for the model, and return new messages as an update)`,
  );
}

/**
 * The state after the node (its update, and whatever it changed in its copy) must be JSON the
 * store keeps exactly: checked here, before the step's write, so every store refuses the same
 * values in the same words, naming the node and the field, and the thread keeps its last step.
 */
export function requireStorable<S extends BaseState>(
  state: S,
  before: readonly Message[],
  node: string,
): void {
  const { messages, ...values } = state;
  let problem = findNonJson(values, "state.values");
  // Messages the step did not add or replace were checked when they came in. A loop, not a
  // reduce with a closure: it runs over the whole transcript at every step.
  for (let i = 0; i < messages.length && problem === null; i++) {
    const message = messages[i]!;
    if (message !== before[i]) problem = findNonJson(message, `messages[${i}]`);
  }
  if (problem) throw new NodeOutputError(node, `left a value that cannot be stored: ${problem}`);
}
