import { Message, type BaseState, type SystemMessage } from "@tenxgraph/core";

/**
 * Turns the thread's transcript into the messages sent to the model (trim, summarize); see
 * `AgentOptions.prepareMessages`.
 */
export type PrepareMessages<S extends BaseState = BaseState> = (
  messages: Message[],
  state: S,
) => Message[] | Promise<Message[]>;

/**
 * LangGraph.js's `prompt`: a system prompt (a string or a system message), or a function of the
 * state returning the messages to send.
 */
export type Prompt<S extends BaseState = BaseState> =
  string | SystemMessage | ((state: S) => Message[] | Promise<Message[]>);

/** What a {@link PreModelHook} returns: the messages the model is sent this time. */
export interface PreModelHookResult {
  llmInputMessages: Message[];
}

/** LangGraph.js's `preModelHook`, as a function of the state. */
export type PreModelHook<S extends BaseState = BaseState> = (
  state: S,
) => PreModelHookResult | Promise<PreModelHookResult>;

/** The options of `AgentOptions` that say what the model is sent. */
interface PromptOptions<S extends BaseState> {
  systemPrompt?: string;
  prepareMessages?: PrepareMessages<S>;
  prompt?: Prompt<S>;
  preModelHook?: PreModelHook<S>;
}

/**
 * The one pair the Agent uses, `systemPrompt` and `prepareMessages`, from either naming: a
 * `prompt` string or system message is the system prompt; a `prompt` function or a
 * `preModelHook` is a `prepareMessages` that reads the state. Two ways of saying one thing
 * (`prompt` and `systemPrompt`, `preModelHook` and `prepareMessages`) are a `TypeError`.
 */
export function resolvePrompt<S extends BaseState>(
  options: PromptOptions<S>,
): { systemPrompt: unknown; prepareMessages: PrepareMessages<S> | undefined } {
  const { prompt, preModelHook } = options;
  const given = (names: (keyof PromptOptions<S>)[]) =>
    names.filter((name) => options[name] !== undefined);
  const both = (names: (keyof PromptOptions<S>)[]) => {
    const set = given(names);
    if (set.length > 1) {
      throw new TypeError(
        `Agent: ${set.map((n) => `'${n}'`).join(" and ")} say the same thing; give one`,
      );
    }
  };
  if (typeof prompt === "function") {
    both(["prompt", "prepareMessages", "preModelHook"]);
    return { systemPrompt: options.systemPrompt, prepareMessages: (_, state) => prompt(state) };
  }
  both(["prepareMessages", "preModelHook"]);
  const prepareMessages = preModelHook ? hookAsPrepare(preModelHook) : options.prepareMessages;
  if (prompt === undefined) return { systemPrompt: options.systemPrompt, prepareMessages };
  both(["prompt", "systemPrompt"]);
  if (typeof prompt === "string") return { systemPrompt: prompt, prepareMessages };
  if (Message.is(prompt) && prompt.role === "system") {
    return { systemPrompt: Message.text(prompt), prepareMessages };
  }
  throw new TypeError(
    "Agent: prompt must be a string, a system message or a function (state) => messages",
  );
}

function hookAsPrepare<S extends BaseState>(hook: PreModelHook<S>): PrepareMessages<S> {
  if (typeof hook !== "function") {
    throw new TypeError("Agent: preModelHook must be a function (state) => { llmInputMessages }");
  }
  return async (_, state) => {
    const result = (await hook(state)) as unknown as Record<string, unknown> | null;
    if (result && Object.hasOwn(result, "messages")) {
      throw new TypeError(
        "Agent: preModelHook returned 'messages': here it only chooses what the model is " +
          "sent; return { llmInputMessages }, and edit the transcript in a node of your own",
      );
    }
    return result?.llmInputMessages as Message[];
  };
}
