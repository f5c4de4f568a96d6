import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Message, type AssistantMessage, type ToolCall } from "./message.js";
import { trimMessages, type TrimMessagesOptions } from "./trim-messages.js";

const call = (id: string, name = "lookup_order"): ToolCall => ({ id, name, arguments: "{}" });
/** A tool round: the assistant message with its calls, then one answer per call. */
function round(...ids: string[]): Message[] {
  return [
    Message.assistant(
      "",
      ids.map((id) => call(id)),
    ),
    ...ids.map((id) => Message.tool(id, "ok")),
  ];
}
const roles = (messages: readonly Message[]) => messages.map((m) => m.role);
/** Every message costs one token, so token budgets read like message counts. */
const one = () => 1;

describe("trimMessages: limits", () => {
  const system = Message.system("You are a support agent.");
  const thread = [
    system,
    Message.user("u1"),
    Message.assistant("a1"),
    Message.user("u2"),
    Message.assistant("a2"),
  ];

  it("keeps the most recent messages within maxMessages, system messages counted", () => {
    expect(trimMessages(thread, { maxMessages: 3 })).toEqual([system, ...thread.slice(3)]);
    expect(trimMessages(thread, { maxMessages: 1 })).toEqual([system]);
    expect(trimMessages(thread, { maxMessages: 99 })).toEqual(thread);
  });

  it("keeps the most recent messages within maxTokens, as the tokenCounter counts them", () => {
    const tokens = (m: Message) => Message.text(m).length; // 24 for the system message, 2 others
    expect(trimMessages(thread, { maxTokens: 28, tokenCounter: tokens })).toEqual([
      system,
      ...thread.slice(3),
    ]);
    expect(trimMessages(thread, { maxTokens: 30, tokenCounter: tokens })).toEqual([
      system,
      ...thread.slice(2),
    ]);
  });

  it("applies both limits when both are given", () => {
    expect(trimMessages(thread, { maxMessages: 2, maxTokens: 99, tokenCounter: one })).toHaveLength(
      2,
    );
    expect(trimMessages(thread, { maxMessages: 99, maxTokens: 2, tokenCounter: one })).toHaveLength(
      2,
    );
  });

  it("with keepSystem false treats system messages as ordinary ones", () => {
    expect(trimMessages(thread, { maxMessages: 2, keepSystem: false })).toEqual(thread.slice(3));
    expect(trimMessages(thread, { maxMessages: 5, keepSystem: false })).toEqual(thread);
  });

  it("keeps several leading system messages, but not a later one the window left behind", () => {
    const later = Message.system("Be brief.");
    const messages = [system, system, Message.user("u1"), later, Message.user("u2")];
    expect(trimMessages(messages, { maxMessages: 3 })).toEqual([system, system, messages[4]]);
    expect(trimMessages(messages, { maxMessages: 4 })).toEqual([
      system,
      system,
      later,
      messages[4],
    ]);
  });

  it("returns the system messages alone when they exceed a limit by themselves", () => {
    expect(trimMessages(thread, { maxMessages: 0 })).toEqual([system]);
    expect(trimMessages(thread, { maxTokens: 0, tokenCounter: one })).toEqual([system]);
    expect(trimMessages(thread, { maxTokens: 0, tokenCounter: one, keepSystem: false })).toEqual(
      [],
    );
  });

  it("returns a new array and leaves the input as it was", () => {
    const input = Object.freeze([...thread]);
    const before = structuredClone(input);
    const result = trimMessages(input, { maxMessages: 99 });
    expect(result).not.toBe(input);
    expect(result).toEqual(input);
    expect(input).toEqual(before);
    expect(trimMessages([], { maxMessages: 3 })).toEqual([]);
  });

  it("counts about four characters a token by default, tool calls and reasoning included", () => {
    const text = "x".repeat(400); // 100 tokens of text + 4 per message
    const messages = [Message.user(text), Message.user(text), Message.user(text)];
    expect(trimMessages(messages, { maxTokens: 208 })).toHaveLength(2);
    expect(trimMessages(messages, { maxTokens: 207 })).toHaveLength(1);

    const asks: AssistantMessage = {
      ...Message.assistant("", [{ id: "c", name: "n", arguments: "y".repeat(399) }]),
      reasoning: [{ text: "z".repeat(400) }],
    };
    const answered = [asks, Message.tool("c", "")];
    // 100 for the call, 100 for the reasoning, 4 each for the two messages' framing.
    expect(trimMessages(answered, { maxTokens: 208 })).toEqual(answered);
    expect(trimMessages(answered, { maxTokens: 207 })).toEqual([]);
  });

  it("does not count tokens when no maxTokens is given", () => {
    const counter = () => {
      throw new Error("counted");
    };
    expect(trimMessages(thread, { maxMessages: 2, tokenCounter: counter })).toHaveLength(2);
  });
});

describe("trimMessages: tool rounds", () => {
  const user = Message.user("charge order 4821");
  const rounds = [user, ...round("call_1", "call_2"), Message.assistant("Charged.")];

  it("drops a whole round rather than start the window inside it", () => {
    // The last 3 would be [tool, tool, assistant]: the round's call message is cut.
    expect(roles(trimMessages(rounds, { maxMessages: 3 }))).toEqual(["assistant"]);
    expect(roles(trimMessages(rounds, { maxMessages: 2 }))).toEqual(["assistant"]);
    expect(roles(trimMessages(rounds, { maxMessages: 4 }))).toEqual([
      "assistant",
      "tool",
      "tool",
      "assistant",
    ]);
  });

  it("drops a round whose answers come later, interleaved with other messages", () => {
    const messages = [
      Message.assistant("", [call("a")]),
      Message.user("meanwhile"),
      Message.tool("a", "late answer"),
      Message.assistant("done"),
    ];
    expect(trimMessages(messages, { maxMessages: 3 })).toEqual([messages[3]]);
    expect(trimMessages(messages, { maxMessages: 4 })).toEqual(messages);
  });

  it("tells rounds apart when providers reuse call ids in every reply", () => {
    const messages = [...round("call_1"), Message.user("again"), ...round("call_1")];
    expect(trimMessages(messages, { maxMessages: 3 })).toEqual(messages.slice(2));
    expect(trimMessages(messages, { maxMessages: 2 })).toEqual(messages.slice(3));
  });

  it("never starts the window with a tool message, even one answering no call", () => {
    const orphan = Message.tool("gone", "answer to a call not in the thread");
    const messages = [Message.user("hi"), orphan, Message.assistant("hello")];
    expect(trimMessages(messages, { maxMessages: 2 })).toEqual([messages[2]]);
  });

  it("keeps an unanswered round at the end: trimming does not repair a thread", () => {
    const pending = Message.assistant("", [call("call_9")]);
    expect(trimMessages([Message.user("hi"), pending], { maxMessages: 1 })).toEqual([pending]);
  });
});

describe("trimMessages: bad options", () => {
  const messages = [Message.user("hi")];
  const bad: [unknown, string][] = [
    [undefined, "options must be an object"],
    [{}, "give maxMessages or maxTokens"],
    [{ keepSystem: true }, "give maxMessages or maxTokens"],
    [{ maxMessages: -1 }, "maxMessages must be an integer >= 0, got -1"],
    [{ maxMessages: 1.5 }, "maxMessages must be an integer >= 0, got 1.5"],
    [{ maxMessages: Infinity }, "maxMessages must be an integer >= 0"],
    [{ maxMessages: "3" }, "maxMessages must be an integer >= 0"],
    [{ maxTokens: -5 }, "maxTokens must be a number >= 0, got -5"],
    [{ maxTokens: NaN }, "maxTokens must be a number >= 0, got NaN"],
    [{ maxTokens: 10, tokenCounter: 4 }, "tokenCounter must be a function"],
    [{ maxMessages: 1, keepSystem: "yes" }, "keepSystem must be a boolean"],
  ];
  it.each(bad)("%j throws a TypeError naming the option", (options, message) => {
    expect(() => trimMessages(messages, options as TrimMessagesOptions)).toThrow(TypeError);
    expect(() => trimMessages(messages, options as TrimMessagesOptions)).toThrow(
      `trimMessages: ${message}`,
    );
  });

  it("rejects a tokenCounter that returns something other than a count", () => {
    for (const value of [-1, NaN, Infinity, "3"]) {
      const tokenCounter = () => value as number;
      expect(() => trimMessages(messages, { maxTokens: 9, tokenCounter })).toThrow(
        new RegExp(`tokenCounter must return a number >= 0, got ${String(value)} for message`),
      );
    }
  });

  it("rejects messages that are not an array", () => {
    expect(() => trimMessages("hi" as never, { maxMessages: 1 })).toThrow(
      "trimMessages: messages must be an array",
    );
  });
});

/** A thread: leading system messages, then user turns, replies, rounds and stray messages. */
const threadArb = fc
  .tuple(
    fc.integer({ min: 0, max: 2 }),
    fc.array(
      fc.oneof(
        fc.constant<Step>({ kind: "user" }),
        fc.constant<Step>({ kind: "reply" }),
        fc.constant<Step>({ kind: "system" }),
        fc.constant<Step>({ kind: "orphan" }),
        fc.record({
          kind: fc.constant("round" as const),
          // Small id pool: rounds reuse `call_1`, as ScriptedModel and many providers do.
          ids: fc.uniqueArray(fc.constantFrom("call_1", "call_2", "call_3"), {
            minLength: 1,
            maxLength: 3,
          }),
          answered: fc.boolean(),
          gap: fc.boolean(),
        }),
      ),
      { maxLength: 25 },
    ),
    fc.integer({ min: 1, max: 40 }),
  )
  .map(([systems, steps, size]) => build(systems, steps, size));

type Step =
  | { kind: "user" | "reply" | "system" | "orphan" }
  | { kind: "round"; ids: string[]; answered: boolean; gap: boolean };

function build(systems: number, steps: Step[], size: number): Message[] {
  const text = (label: string) => label + "x".repeat(size);
  const messages: Message[] = [];
  for (let i = 0; i < systems; i += 1) messages.push(Message.system(text("instructions")));
  for (const step of steps) {
    if (step.kind === "user") messages.push(Message.user(text("question")));
    if (step.kind === "reply") messages.push(Message.assistant(text("answer")));
    if (step.kind === "system") messages.push(Message.system(text("note")));
    if (step.kind === "orphan") messages.push(Message.tool("call_x", text("orphan")));
    if (step.kind === "round") {
      messages.push(
        Message.assistant(
          "",
          step.ids.map((id) => call(id)),
        ),
      );
      // A gap puts a message between a call and its answers; an unanswered round stands for a
      // call still running when the window is cut.
      if (step.gap) messages.push(Message.user(text("meanwhile")));
      if (step.answered) {
        for (const id of [...step.ids].reverse()) messages.push(Message.tool(id, text("result")));
      }
    }
  }
  return messages;
}

const optionsArb: fc.Arbitrary<TrimMessagesOptions> = fc
  .record(
    {
      maxMessages: fc.integer({ min: 0, max: 30 }),
      maxTokens: fc.integer({ min: 0, max: 400 }),
      keepSystem: fc.boolean(),
      counter: fc.constantFrom("default", "length", "one"),
    },
    { requiredKeys: ["keepSystem", "counter"] },
  )
  .filter((o) => o.maxMessages !== undefined || o.maxTokens !== undefined)
  .map(({ counter, ...options }) => ({
    ...options,
    ...(counter === "length" && { tokenCounter: (m: Message) => Message.text(m).length }),
    ...(counter === "one" && { tokenCounter: one }),
  }));

function headLength(messages: readonly Message[], keepSystem: boolean): number {
  let n = 0;
  if (keepSystem) while (n < messages.length && messages[n]!.role === "system") n += 1;
  return n;
}

/** Tokens of `messages` as `trimMessages` counts them with these options. */
function tokensOf(messages: readonly Message[], options: TrimMessagesOptions): number {
  if (options.maxTokens === undefined) return 0;
  // The default counter, restated: four characters a token, plus 4 per message.
  const counter =
    options.tokenCounter ??
    ((m: Message) =>
      Math.ceil(
        (Message.text(m).length +
          (m.toolCalls ?? []).reduce((n, c) => n + c.name.length + c.arguments.length, 0)) /
          4,
      ) + 4);
  return messages.reduce((sum, m) => sum + counter(m), 0);
}

function fits(messages: readonly Message[], options: TrimMessagesOptions): boolean {
  return (
    messages.length <= (options.maxMessages ?? Infinity) &&
    tokensOf(messages, options) <= (options.maxTokens ?? Infinity)
  );
}

/** True when a window starting at `start` of `rest` splits no tool round. */
function startsCleanly(rest: readonly Message[], start: number): boolean {
  if (start === rest.length) return true;
  if (rest[start]!.role === "tool") return false;
  const before = rest.slice(0, start);
  const window = rest.slice(start);
  return window.every((message, i) => {
    if (message.role !== "tool") return true;
    const answered = [...before, ...window.slice(0, i)].findLastIndex(
      (m) => m.role === "assistant" && m.toolCalls?.some((c) => c.id === message.toolCallId),
    );
    return answered === -1 || answered >= start;
  });
}

describe("trimMessages: properties", () => {
  it("returns the kept system messages and a suffix of the rest, within the limits, split nowhere", () => {
    fc.assert(
      fc.property(threadArb, optionsArb, (messages, options) => {
        const before = structuredClone(messages);
        const result = trimMessages(messages, options);
        expect(messages).toEqual(before);

        const h = headLength(messages, options.keepSystem ?? true);
        const head = messages.slice(0, h);
        const rest = messages.slice(h);
        // The kept system messages, the very objects, then a suffix of the rest.
        expect(result.slice(0, h)).toEqual(head);
        result.slice(0, h).forEach((m, i) => expect(m).toBe(head[i]));
        const window = result.slice(h);
        const start = rest.length - window.length;
        window.forEach((m, i) => expect(m).toBe(rest[start + i]));

        if (!fits(head, options)) {
          expect(window).toEqual([]);
          return;
        }
        expect(fits(result, options)).toBe(true);
        expect(startsCleanly(rest, start)).toBe(true);
        // And it is the longest such window: every longer clean one breaks a limit.
        for (let longer = start - 1; longer >= 0; longer -= 1) {
          if (startsCleanly(rest, longer)) {
            expect(fits([...head, ...rest.slice(longer)], options)).toBe(false);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it("never returns a window that starts with a tool message or cuts a call from its answers", () => {
    fc.assert(
      fc.property(threadArb, optionsArb, (messages, options) => {
        const result = trimMessages(messages, options);
        const window = result.slice(headLength(messages, options.keepSystem ?? true));
        expect(window[0]?.role).not.toBe("tool");
        const calls = new Set<string>();
        const cut = new Set(messages.slice(0, messages.length - window.length));
        for (const message of messages) {
          if (cut.has(message) && message.role === "assistant") {
            for (const c of message.toolCalls ?? []) calls.add(c.id);
          }
          if (!cut.has(message) && message.role === "assistant") {
            for (const c of message.toolCalls ?? []) calls.delete(c.id);
          }
          // A kept answer to a call whose latest caller was cut: a split round.
          if (!cut.has(message) && message.role === "tool") {
            expect(calls.has(message.toolCallId)).toBe(false);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
