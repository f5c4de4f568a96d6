import type { Granularity, InvokeInput, RunOptions } from "./run-types.js";
import { userMessage, type MessageInput } from "./wire-message.js";

/** The body of `POST /v1/graph/invoke` and `/v1/graph/stream`, as the server validates it. */
export interface GraphInputBody {
  messages: MessageInput[];
  initial_state?: Record<string, unknown>;
  config?: Record<string, unknown>;
  recursion_limit?: number;
  response_granularity?: Granularity;
  resume?: unknown;
  interrupt_id?: string;
  continue?: true;
}

/** The request body for a run: input as messages, a resume, or a continuation; options in snake_case. */
export function runBody(input: InvokeInput, options: RunOptions = {}): GraphInputBody {
  const body: GraphInputBody = { messages: [] };
  if (typeof input === "string") body.messages = [userMessage(input)];
  else if (Array.isArray(input)) body.messages = input;
  else if ("resume" in input) {
    // `resume: undefined` would vanish from the JSON and read as new input: send null instead.
    body.resume = input.resume === undefined ? null : input.resume;
    if (input.interruptId !== undefined) body.interrupt_id = input.interruptId;
  } else if ("continue" in input) body.continue = true;
  else body.messages = [input];
  const config = { ...options.config };
  if (options.threadId !== undefined) config.thread_id = options.threadId;
  if (options.fromVersion !== undefined) config.from_version = options.fromVersion;
  if (Object.keys(config).length > 0) body.config = config;
  if (options.initialState !== undefined) body.initial_state = options.initialState;
  if (options.recursionLimit !== undefined) body.recursion_limit = options.recursionLimit;
  if (options.granularity !== undefined) body.response_granularity = options.granularity;
  return body;
}
