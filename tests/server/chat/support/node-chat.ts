import {
  AbstractChat,
  DefaultChatTransport,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  type UIMessage,
} from "ai";

/** useChat's state without React: the messages in an array, copied on every change. */
class ArrayChatState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/**
 * The AI SDK's chat (what `useChat` runs under React) in Node, on the default transport pointed
 * at `base`/v1/chat with a bearer token: the same requests and the same stream parsing as a page.
 */
export class NodeChat extends AbstractChat<UIMessage> {
  readonly errors: Error[] = [];

  constructor(
    base: string,
    token: string,
    init: Omit<ChatInit<UIMessage>, "transport" | "messages"> & { fetch?: typeof fetch } = {},
  ) {
    const { fetch: fetchImpl, ...rest } = init;
    super({
      ...rest,
      transport: new DefaultChatTransport({
        api: `${base}/v1/chat`,
        headers: { authorization: `Bearer ${token}` },
        ...(fetchImpl ? { fetch: fetchImpl } : {}),
      }),
      state: new ArrayChatState(),
      onError: (error) => this.errors.push(error),
    });
  }

  /** The last assistant message. */
  get reply(): UIMessage {
    const reply = this.messages.findLast((m) => m.role === "assistant");
    if (!reply) throw new Error(`no assistant message in ${JSON.stringify(this.messages)}`);
    return reply;
  }
}

/** The text of a UI message's text parts. */
export function textOf(message: UIMessage): string {
  return message.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/** A UI message's tool parts, as `name:state` (`charge_card:output-available`). */
export function toolStates(message: UIMessage): string[] {
  return message.parts
    .filter((p) => p.type.startsWith("tool-"))
    .map((p) => `${p.type.slice(5)}:${(p as { state: string }).state}`);
}

/** Resolves once `ready()` holds, polling (the chat sends its automatic requests in the background). */
export async function until(ready: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
