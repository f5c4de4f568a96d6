import { InvalidRunError } from "../errors/errors.js";
import { isCommand } from "../definition/command.js";
import { applyUpdate, type BaseState, type StateUpdate } from "../definition/reducers.js";
import { findSchemaProblem } from "../definition/state-schema.js";
import { Message } from "../messages/message.js";
import { findNonJson } from "../storage/json-check.js";
import type { RunDependencies } from "./run-dependencies.js";

/**
 * With a state schema, the state a turn starts from (the thread's, or the defaults, with the
 * input applied) must match it: nothing is written otherwise, and the error names the field.
 */
export function requireSchema<S extends BaseState>(deps: RunDependencies<S>, state: S): void {
  if (!deps.graph.schema) return;
  const problem = findSchemaProblem(deps.graph.schema, state);
  if (problem) {
    throw new InvalidRunError(
      "INPUT_001",
      `The state with this input does not match the graph's schema: ${problem}`,
    );
  }
}

/**
 * Applies a caller's update (an input, or `updateState`'s) to `state` through the reducers; an
 * update the transcript cannot take (removing a message it does not hold) is `INPUT_001`.
 */
export function applyCallerUpdate<S extends BaseState>(
  deps: RunDependencies<S>,
  state: S,
  update: StateUpdate<S>,
): void {
  try {
    applyUpdate(state, update, deps.graph.reducers);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new InvalidRunError("INPUT_001", error.message);
  }
}

/** A state update from the caller: an object, its messages messages or removals, all JSON. */
export function validateInput(input: unknown): void {
  if (isCommand(input)) {
    throw new InvalidRunError(
      "INPUT_001",
      "A Command as a run's input answers an interrupt: new Command({ resume: answer, interruptId? })",
    );
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new InvalidRunError(
      "INPUT_001",
      "Input must be a state update object (e.g. { messages: [Message.user('hi')] }), { resume }, or null",
    );
  }
  const messages = (input as { messages?: unknown }).messages;
  if (messages === undefined) return requireJson(input, "input");
  if (!Array.isArray(messages)) {
    throw new InvalidRunError("INPUT_001", "input.messages must be an array of messages");
  }
  messages.forEach((message, index) => {
    if (!Message.is(message) && !Message.isRemoval(message)) {
      if (isLangChainMessage(message)) {
        throw new InvalidRunError(
          "INPUT_001",
          `input.messages[${index}] is a LangChain message: convert the input with langchainInput(input) from @tenxgraph/langchain`,
        );
      }
      throw new InvalidRunError(
        "INPUT_001",
        `input.messages[${index}] is not a message: build it with Message.user(text) or another factory`,
      );
    }
  });
  requireJson(input, "input");
}

/**
 * A LangChain message (an object of its classes, or its JSON) by its look alone: the core imports
 * no LangChain, so the error can only point at the package that converts it.
 */
function isLangChainMessage(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return "lc_serializable" in v || "lc_kwargs" in v || (v.lc === 1 && v.type === "constructor");
}

/** A value the store could not keep exactly is refused before the start write. */
export function requireJson(value: unknown, path: string): void {
  const problem = findNonJson(value, path);
  if (problem) throw new InvalidRunError("INPUT_001", problem);
}
