import { z } from "zod";
import type { CompiledGraph } from "../graph/compiled-graph.js";
import type { CompileOptions } from "../graph/compile-options.js";
import { END } from "../definition/edges.js";
import type { NodeLike } from "../definition/graph-node.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph, type StateOptions } from "../graph/state-graph.js";
import { Message, type AssistantMessage } from "../messages/message.js";
import { sleep } from "../node/deadline.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool, type AnyTool } from "../tools/tool.js";
import { recordingLogger } from "./recording-logger.js";
import { ScriptedModel, type ScriptedTurn } from "./scripted-model.js";

/** Options of {@link supportTools}. */
export interface SupportToolsOptions {
  /** Told every charge and email that really happens, before the tool returns. */
  outside?: (line: string) => void;
  /** How long the mailer takes to send a receipt (default 0): a run can die while it waits. */
  mailerDelayMs?: number;
}

/**
 * The support agent's three tools: `lookup_order`, `charge_card` (with a domain idempotency
 * key, `order-<id>-charge`, handed to the payment provider) and `send_receipt`. `outside` hears
 * every charge and receipt that really happens, e.g.
 * `payment provider: charged order 4821 (key order-4821-charge)`.
 *
 * @example
 * const outside: string[] = [];
 * const app = supportAgent({ model: SUPPORT_SCRIPT, tools: supportTools({ outside: (l) => outside.push(l) }) });
 */
export function supportTools({ outside = () => {}, mailerDelayMs = 0 }: SupportToolsOptions = {}) {
  const order = z.object({ order_id: z.string() });
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Find an order.",
    schema: order,
    execute: (args) => ({ order_id: args.order_id, amount_cents: 4200 }),
  });
  const chargeCard = tool({
    name: "charge_card",
    description: "Charge the customer's saved card for an order.",
    schema: order.extend({ amount_cents: z.number().int() }),
    idempotencyKey: (args) => `order-${args.order_id}-charge`,
    execute(args, ctx) {
      outside(`payment provider: charged order ${args.order_id} (key ${ctx.idempotencyKey})`);
      return `Charged ${args.amount_cents / 100} USD`;
    },
  });
  const sendReceipt = tool({
    name: "send_receipt",
    description: "Email the receipt.",
    schema: order,
    async execute(args, ctx) {
      if (mailerDelayMs > 0) await sleep(mailerDelayMs);
      ctx.signal.throwIfAborted();
      outside(`mailer: sent the receipt for order ${args.order_id}`);
      return "Receipt sent";
    },
  });
  const tools: [typeof lookupOrder, typeof chargeCard, typeof sendReceipt] = [
    lookupOrder,
    chargeCard,
    sendReceipt,
  ];
  return tools;
}

/** The scripted model's replies for order 4821: the three calls in one message, then the answer. */
export const SUPPORT_SCRIPT: readonly ScriptedTurn[] = [
  {
    toolCalls: [
      { name: "lookup_order", args: { order_id: "4821" } },
      { name: "charge_card", args: { order_id: "4821", amount_cents: 4200 } },
      { name: "send_receipt", args: { order_id: "4821" } },
    ],
  },
  "Order 4821 is charged and the receipt is on its way.",
];

/**
 * A model for {@link supportTools} that needs no script: it reads the order number from the
 * last user message, asks for the three calls in one message, and answers once their results
 * are in. Its reply depends only on the transcript, so a replayed step gets the same reply.
 */
export function supportModel(state: BaseState): AssistantMessage {
  const last = state.messages.at(-1);
  const user = state.messages.findLast((m) => m.role === "user");
  const order = /\d+/.exec(user ? Message.text(user) : "")?.[0];
  if (last?.role === "tool") {
    return Message.assistant(`Order ${order} is charged and the receipt is on its way.`);
  }
  if (!order) return Message.assistant("Which order should I charge? Tell me its number.");
  const call = (id: string, name: string, args: object) => ({
    id,
    name,
    arguments: JSON.stringify(args),
  });
  return Message.assistant("", [
    call("call_1", "lookup_order", { order_id: order }),
    call("call_2", "charge_card", { order_id: order, amount_cents: 4200 }),
    call("call_3", "send_receipt", { order_id: order }),
  ]);
}

/** Options of {@link supportAgent}: the model, the tools, and the graph's compile options. */
export interface SupportAgentOptions<S extends BaseState> extends CompileOptions {
  /** The model: scripted replies (a {@link ScriptedModel}), or any node. */
  model: readonly ScriptedTurn<S>[] | NodeLike<S>;
  tools: readonly AnyTool[];
  state?: StateOptions<S>;
  /**
   * A node run after every tool step, before the model (TOOL → `name` → MAIN): what a later
   * version of the agent adds, e.g. an audit step, to exercise a deploy.
   */
  afterTools?: { name: string; node: NodeLike<S> };
}

/**
 * The support agent's graph around any model and tools: MAIN (the model) → TOOL while the last
 * message has tool calls → MAIN … → END. Build it twice on one checkpointer to get "another
 * process" on the same threads. The logger defaults to a {@link recordingLogger} (silent).
 *
 * @example
 * const app = supportAgent({ model: SUPPORT_SCRIPT, tools: supportTools(), checkpointer });
 * await app.invoke({ messages: [Message.user("charge order 4821")] }, { threadId: "t" });
 */
export function supportAgent<S extends BaseState = BaseState & Record<string, unknown>>(
  options: SupportAgentOptions<S>,
): CompiledGraph<S> {
  const { model, tools, state, afterTools, ...compile } = options;
  // A short claimStaleAfterMs needs heartbeats at least twice as often (compile() checks it).
  if (compile.claimStaleAfterMs !== undefined && compile.stopPollIntervalMs === undefined) {
    compile.stopPollIntervalMs = Math.min(1000, compile.claimStaleAfterMs / 2);
  }
  const node: NodeLike<S> = Array.isArray(model)
    ? new ScriptedModel<S>(model as readonly ScriptedTurn<S>[])
    : (model as NodeLike<S>);
  const graph = new StateGraph<S>(state)
    .addNode("MAIN", node)
    .addNode("TOOL", new ToolNode<S>([...tools]))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls?.length ? "TOOL" : END;
    })
    .setEntryPoint("MAIN");
  const routed = afterTools
    ? graph
        .addNode(afterTools.name, afterTools.node)
        .addEdge("TOOL", afterTools.name)
        .addEdge(afterTools.name, "MAIN")
    : graph.addEdge("TOOL", "MAIN");
  return routed.compile({ logger: recordingLogger(), ...compile });
}
