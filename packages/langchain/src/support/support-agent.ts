import { langchainModel } from "../model/langchain-model.js";
import type { Logger } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import { supportTools, type FaultInjector } from "@tenxgraph/core/testing";
import { createReactAgent } from "@tenxgraph/models";
import { TurnByTurnChatModel, textTurn, toolTurn } from "./turn-by-turn-chat-model.js";

export const SUPPORT_THREAD = "order-4821";
export const SUPPORT_REQUEST =
  "Please charge my saved card for order 4821 and email me the receipt.";
export const SUPPORT_ANSWER = "Order 4821 is charged and the receipt is on its way.";

/** The support agent's model as a LangChain chat model: three tool calls, then the answer. */
export function supportChatModel(): TurnByTurnChatModel {
  return new TurnByTurnChatModel([
    toolTurn([
      { id: "call_7Hq2", name: "lookup_order", args: { order_id: "4821" } },
      { id: "call_8Rk5", name: "charge_card", args: { order_id: "4821", amount_cents: 4200 } },
      { id: "call_9Tm1", name: "send_receipt", args: { order_id: "4821" } },
    ]),
    textTurn(SUPPORT_ANSWER),
  ]);
}

export interface SupportAgentOptions {
  chatModel: TurnByTurnChatModel;
  checkpointer: Checkpointer;
  /** Called once per charge or receipt that really happened. */
  outside: (line: string) => void;
  faultPoints?: FaultInjector;
  logger?: Logger;
}

/** The seed's support agent: createReactAgent on the LangChain model, through the ledger. */
export function supportAgent(options: SupportAgentOptions) {
  return createReactAgent({
    model: langchainModel(options.chatModel),
    systemPrompt: "You are a support agent. Use the tools.",
    tools: supportTools({ outside: options.outside, mailerDelayMs: 50 }),
    retry: { initialDelayMs: 1, maxDelayMs: 20 },
    checkpointer: options.checkpointer,
    compile: {
      ...(options.faultPoints && { faultPoints: options.faultPoints }),
      ...(options.logger && { logger: options.logger }),
    },
  });
}
