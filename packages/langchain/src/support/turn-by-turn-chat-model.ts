import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessageChunk } from "@langchain/core/messages";
import type { ChatGenerationChunk } from "@langchain/core/outputs";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";

/**
 * LangChain's own `FakeStreamingChatModel`, one turn of chunks per request (it replays the same
 * chunks on every request), recording what each request sent and which tools were bound. A
 * turn that is an `Error` is thrown instead, as a provider's failed request.
 */
export class TurnByTurnChatModel extends FakeStreamingChatModel {
  readonly requests: BaseMessage[][] = [];
  boundTools: unknown[] = [];
  readonly #turns: (AIMessageChunk[] | Error)[];

  constructor(turns: (AIMessageChunk[] | Error)[]) {
    super({});
    this.#turns = turns;
  }

  override bindTools(tools: unknown[]) {
    this.boundTools = tools;
    return this as unknown as ReturnType<FakeStreamingChatModel["bindTools"]>;
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    this.requests.push(messages);
    const turn = this.#turns[this.requests.length - 1];
    if (turn === undefined) throw new Error(`no turn scripted for request ${this.requests.length}`);
    if (turn instanceof Error) throw turn;
    this.chunks = turn;
    yield* super._streamResponseChunks(messages, options, runManager);
  }
}

/** A turn that streams `text` in pieces of `size` characters. */
export function textTurn(text: string, size = 4): AIMessageChunk[] {
  const chunks: AIMessageChunk[] = [];
  for (let i = 0; i < text.length; i += size) {
    chunks.push(new AIMessageChunk({ content: text.slice(i, i + size) }));
  }
  return chunks;
}

/** A turn that calls tools, one chunk per call. */
export function toolTurn(calls: { id: string; name: string; args: object }[]): AIMessageChunk[] {
  return calls.map(
    (call) =>
      new AIMessageChunk({
        content: "",
        tool_calls: [{ ...call, args: call.args as Record<string, unknown>, type: "tool_call" }],
      }),
  );
}
