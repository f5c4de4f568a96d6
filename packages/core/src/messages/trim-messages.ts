import { Message } from "./message.js";

/** How {@link trimMessages} bounds the window. At least one of the limits is required. */
export interface TrimMessagesOptions {
  /** Most messages in the result, kept system messages included (an integer >= 0). */
  maxMessages?: number;
  /** Most tokens in the result, as `tokenCounter` counts them, kept system messages included. */
  maxTokens?: number;
  /**
   * Tokens of one message (a number >= 0). The default is an approximation, not a tokenizer:
   * one token per four characters of text, tool call names and arguments and reasoning,
   * rounded up, plus 4 per message for its role and framing; images and files count nothing.
   * Pass the provider's tokenizer when the budget is tight.
   */
  tokenCounter?: (message: Message) => number;
  /**
   * Keep the thread's leading system messages (default true): they are always in the result and
   * count against the limits. With `false` they are ordinary messages, kept only while the
   * window reaches back to them.
   */
  keepSystem?: boolean;
}

/**
 * The most recent messages that fit `maxMessages` and/or `maxTokens`: a bounded window of a long
 * thread to send a model (see the `Agent`'s `prepareMessages`). The window is a suffix of the
 * thread, after the leading system messages, which are kept unless `keepSystem` is false.
 *
 * A tool round is never split: the window does not start with a tool message, nor hold a tool
 * message whose assistant call message was cut; a round that does not fit is dropped whole.
 * If the kept system messages alone exceed a limit, they are returned alone: instructions are
 * not dropped silently. Returns a new array of the same message objects; the input is not
 * changed. Bad options throw a `TypeError` naming the option.
 *
 * @example
 * const window = trimMessages(state.messages, { maxTokens: 8000 });
 * const lastTen = trimMessages(state.messages, { maxMessages: 10 });
 */
export function trimMessages(
  messages: readonly Message[],
  options: TrimMessagesOptions,
): Message[] {
  if (!Array.isArray(messages)) throw new TypeError("trimMessages: messages must be an array");
  const { maxMessages, maxTokens, count, keepSystem } = checkOptions(options);
  const systemCount = keepSystem ? leadingSystemCount(messages) : 0;
  const head = messages.slice(0, systemCount);
  const rest = messages.slice(systemCount);
  const costOf = (message: Message) => (maxTokens === Infinity ? 0 : count(message));

  let messagesLeft = maxMessages - head.length;
  let tokensLeft = maxTokens - head.reduce((sum, message) => sum + costOf(message), 0);
  // The longest suffix of `rest` within the limits starts at `start`; the cost only grows as
  // the window reaches back, so the first message that does not fit ends the walk.
  let start = rest.length;
  while (start > 0 && messagesLeft >= 1) {
    const cost = costOf(rest[start - 1]!);
    if (cost > tokensLeft) break;
    messagesLeft -= 1;
    tokensLeft -= cost;
    start -= 1;
  }
  if (messagesLeft < 0 || tokensLeft < 0) return head;
  // Moving the start later only shrinks the window, so it stays within the limits.
  const valid = validStarts(rest);
  while (start < rest.length && !valid[start]) start += 1;
  return [...head, ...rest.slice(start)];
}

interface CheckedOptions {
  maxMessages: number;
  maxTokens: number;
  count: (message: Message) => number;
  keepSystem: boolean;
}

function checkOptions(options: TrimMessagesOptions): CheckedOptions {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("trimMessages: options must be an object, e.g. { maxTokens: 8000 }");
  }
  const { maxMessages, maxTokens, tokenCounter, keepSystem = true } = options;
  if (maxMessages === undefined && maxTokens === undefined) {
    throw new TypeError("trimMessages: give maxMessages or maxTokens (or both)");
  }
  if (maxMessages !== undefined && !(Number.isInteger(maxMessages) && maxMessages >= 0)) {
    throw new TypeError(
      `trimMessages: maxMessages must be an integer >= 0, got ${String(maxMessages)}`,
    );
  }
  if (maxTokens !== undefined && !(typeof maxTokens === "number" && maxTokens >= 0)) {
    throw new TypeError(`trimMessages: maxTokens must be a number >= 0, got ${String(maxTokens)}`);
  }
  if (tokenCounter !== undefined && typeof tokenCounter !== "function") {
    throw new TypeError("trimMessages: tokenCounter must be a function (message) => number");
  }
  if (typeof keepSystem !== "boolean") {
    throw new TypeError(`trimMessages: keepSystem must be a boolean, got ${String(keepSystem)}`);
  }
  const counter = tokenCounter ?? approximateTokens;
  const count = (message: Message) => {
    const tokens = counter(message);
    if (!(typeof tokens === "number" && tokens >= 0 && tokens !== Infinity)) {
      throw new TypeError(
        `trimMessages: tokenCounter must return a number >= 0, got ${String(tokens)} for message '${message.id}'`,
      );
    }
    return tokens;
  };
  return {
    maxMessages: maxMessages ?? Infinity,
    maxTokens: maxTokens ?? Infinity,
    count,
    keepSystem,
  };
}

function leadingSystemCount(messages: readonly Message[]): number {
  let n = 0;
  while (n < messages.length && messages[n]!.role === "system") n += 1;
  return n;
}

/**
 * `valid[i]`: a window may start at `i` without splitting a tool round. It may not start with
 * a tool message, nor hold a tool message answering a call of an assistant message before
 * `i`. Call ids repeat across rounds (many providers number them `call_1`, `call_2`, … in
 * every reply), so a tool message answers the latest assistant message before it that made the
 * call. Tool messages that answer no call in the thread cannot be split from it, so only the
 * first rule applies to them.
 */
function validStarts(messages: readonly Message[]): boolean[] {
  const callerOf: number[] = [];
  const latestCaller = new Map<string, number>();
  messages.forEach((message, i) => {
    if (message.role === "assistant") {
      for (const call of message.toolCalls ?? []) latestCaller.set(call.id, i);
    }
    callerOf.push(message.role === "tool" ? (latestCaller.get(message.toolCallId) ?? i) : i);
  });
  const valid = new Array<boolean>(messages.length + 1).fill(true);
  let earliestCaller = Infinity;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    earliestCaller = Math.min(earliestCaller, callerOf[i]!);
    valid[i] = messages[i]!.role !== "tool" && earliestCaller >= i;
  }
  return valid;
}

/** About four characters a token, plus 4 tokens per message for its role and framing. */
function approximateTokens(message: Message): number {
  let characters = Message.text(message).length;
  if (message.role === "assistant") {
    for (const call of message.toolCalls ?? []) {
      characters += call.name.length + call.arguments.length;
    }
    for (const block of message.reasoning ?? []) characters += block.text.length;
  }
  return Math.ceil(characters / 4) + 4;
}
