import type { Checkpointer } from "@tenxgraph/core/storage";
import type { Logger } from "@tenxgraph/core";
import { supportTools, type FaultInjector } from "@tenxgraph/core/testing";
import { createReactAgent } from "../react/create-react-agent.js";
import type { FakeReply } from "./fake-openai-server.js";
import { pieces, streamedReply } from "./openai-replies.js";

/** Where the support agent runs and how it reports what reached the outside world. */
export interface SupportAgentOptions {
  /** The fake server's base URL. */
  baseURL: string;
  checkpointer: Checkpointer;
  /** Called once per charge or receipt that really happened. */
  outside: (line: string) => void;
  faultPoints?: FaultInjector;
  logger?: Logger;
}

export const SUPPORT_THREAD = "order-4821";
export const SUPPORT_REQUEST =
  "Please charge my saved card for order 4821 and email me the receipt.";
export const SUPPORT_ANSWER = "Order 4821 is charged and the receipt is on its way.";

/** The seed's support agent as `createReactAgent` on the real OpenAI client. */
export function supportAgent(options: SupportAgentOptions) {
  return createReactAgent({
    model: "openai/gpt-4o-mini",
    provider: { baseURL: options.baseURL, apiKey: "sk-test" },
    systemPrompt: "You are a support agent. Use the tools.",
    // The mailer answers after the charge, so the charge is recorded on its own as it returns
    // (the window the crash tests aim at) and the receipt rides in the tool step's write.
    tools: supportTools({ outside: options.outside, mailerDelayMs: 50 }),
    retry: { initialDelayMs: 1, maxDelayMs: 20 },
    checkpointer: options.checkpointer,
    compile: {
      ...(options.faultPoints && { faultPoints: options.faultPoints }),
      ...(options.logger && { logger: options.logger }),
    },
  });
}

/** What the model answers, as OpenAI streams it: three calls in one message, then the answer. */
export function supportReplies(): FakeReply[] {
  return [
    streamedReply({
      text: [],
      toolCalls: [
        { id: "call_7Hq2", name: "lookup_order", argumentChunks: pieces('{"order_id":"4821"}') },
        {
          id: "call_8Rk5",
          name: "charge_card",
          argumentChunks: pieces('{"order_id":"4821","amount_cents":4200}'),
        },
        { id: "call_9Tm1", name: "send_receipt", argumentChunks: pieces('{"order_id":"4821"}') },
      ],
      usage: { prompt: 182, completion: 71 },
    }),
    streamedReply({ text: pieces(SUPPORT_ANSWER, 9), usage: { prompt: 260, completion: 14 } }),
  ];
}
