import { appendFileSync } from "node:fs";
import { END, Message, StateGraph, ToolNode, type Logger } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import {
  type FaultInjector,
  SUPPORT_SCRIPT,
  ScriptedModel,
  supportTools,
} from "@tenxgraph/core/testing";
// The support agent's tools and the model's script, shared with the tests: lookup_order,
// charge_card (its domain idempotency key goes to the payment provider) and send_receipt.

/** Where the demo's support agent keeps its threads and reports what reached the outside world. */
export interface DemoAppOptions {
  checkpointer: Checkpointer;
  /** Append-only file: one line per charge or email that really happened. */
  outsideWorldLog: string;
  faultPoints?: FaultInjector;
  logger: Logger;
}

export const DEMO_THREAD_ID = "demo-order-4821";

/** The demo's run settings: short deadlines, so a dead worker's claims are found stale fast. */
export const DEMO_RUN_CONFIG = { threadId: DEMO_THREAD_ID, toolTimeout: 30, nodeTimeout: 60 };

/**
 * The support agent: a scripted model asks for three tools in one turn; `charge_card`
 * carries a domain key, and `send_receipt` takes a moment to talk to the mailer. Every charge
 * and email is appended to the outside-world log.
 */
export function buildSupportAgent(options: DemoAppOptions) {
  const outside = (line: string) => appendFileSync(options.outsideWorldLog, `${line}\n`);
  // The mailer is slow today: the worker dies while the receipt is still being sent.
  const tools = supportTools({ outside, mailerDelayMs: 800 });
  const model = new ScriptedModel(SUPPORT_SCRIPT);
  return new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode(tools))
    .addConditionalEdges("MAIN", (state) =>
      state.messages.at(-1)?.toolCalls?.length ? "TOOL" : END,
    )
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({
      checkpointer: options.checkpointer,
      faultPoints: options.faultPoints,
      logger: options.logger,
      // A claim whose worker stopped heartbeating for 1 s is in doubt (default 3 s).
      stopPollIntervalMs: 250,
      claimStaleAfterMs: 1000,
    });
}

export const DEMO_INPUT = { messages: [Message.user("Please charge order 4821 and email me")] };
