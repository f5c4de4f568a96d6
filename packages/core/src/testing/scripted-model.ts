import type { GraphNode } from "../definition/graph-node.js";
import type { BaseState } from "../definition/reducers.js";
import { Message, type AssistantMessage } from "../messages/message.js";
import { sleep } from "../node/deadline.js";
import type { NodeContext } from "../node/node-context.js";

/** One scripted model reply: text, tool calls, or a function of the state. */
export type ScriptedTurn<S extends BaseState = BaseState> =
  | string
  | { text?: string; toolCalls?: { name: string; args: unknown; id?: string }[] }
  | ((state: S) => AssistantMessage);

/**
 * A model node that replies from a script, for tests and demos without network. The reply is
 * chosen by how many assistant messages the thread already has, so a replayed step gets the
 * same reply, and call ids are `call_1`, `call_2`, ... in every message, as many providers do.
 * During `stream`, text is also sent as `message_delta` events word by word.
 *
 * @example
 * const model = new ScriptedModel([
 *   { toolCalls: [{ name: "charge_card", args: { order_id: "4821", amount_cents: 4200 } }] },
 *   "Charged. Anything else?",
 * ]);
 * graph.addNode("MAIN", model);
 */
export class ScriptedModel<S extends BaseState = BaseState> implements GraphNode<S> {
  readonly #turns: readonly ScriptedTurn<S>[];
  readonly #delayMs: number;
  #calls = 0;

  constructor(turns: readonly ScriptedTurn<S>[], options: { delayMs?: number } = {}) {
    this.#turns = [...turns];
    this.#delayMs = options.delayMs ?? 0;
  }

  /** How many times the model was asked, replays included. */
  get calls(): number {
    return this.#calls;
  }

  async run(state: S, ctx: NodeContext): Promise<AssistantMessage> {
    this.#calls += 1;
    let index = 0;
    for (const message of state.messages) if (message.role === "assistant") index += 1;
    const turn = this.#turns[index];
    if (turn === undefined) {
      throw new Error(
        `ScriptedModel has ${this.#turns.length} replies; reply ${index + 1} was asked for`,
      );
    }
    if (this.#delayMs > 0) await sleep(this.#delayMs, ctx.signal);
    const reply = toMessage(turn, state);
    const text = Message.text(reply);
    if (text) {
      for (const delta of text.match(/\S+\s*/g) ?? []) {
        ctx.emit({ type: "message_delta", node: ctx.node, messageId: reply.id, delta });
      }
    }
    return reply;
  }
}

function toMessage<S extends BaseState>(turn: ScriptedTurn<S>, state: S): AssistantMessage {
  if (typeof turn === "function") return turn(state);
  if (typeof turn === "string") return Message.assistant(turn);
  const toolCalls = (turn.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_${i + 1}`,
    name: call.name,
    arguments: JSON.stringify(call.args),
  }));
  return Message.assistant(turn.text ?? "", toolCalls);
}
