import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import {
  Message,
  interrupt,
  silentLogger,
  tool,
  type BaseState,
  type NodeContext,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { supportAgent } from "@tenxgraph/core/testing";
import { appendEffect } from "../../support/effect-log.js";

/** What the served graph does; plain JSON, so a server process gets it in its params. */
export interface InspectorGraphParams {
  /** One JSON line per charge that really happened: `{ line, pid }`. */
  effectLog: string;
  /** charge_card hangs before charging (a server to SIGKILL mid tool). */
  hangCharges?: boolean;
}

/**
 * The graph the inspector's browser tests serve. The last user message says what the model
 * does: `charge <n>` calls charge_card (domain key `order-<n>-charge`; in doubt it asks a human),
 * `export` calls slow_export (which hangs until stopped), `refund <who>` calls approve_refund
 * (which pauses with `interrupt()` for an approval and an amount), `remind me` sleeps an hour
 * (`ctx.sleep`); anything else is echoed.
 * After tool results the model sums them up. Before `export` it writes its reply token by token,
 * slowly, so the page can be seen showing the tokens.
 */
export function buildInspectorGraph(params: InspectorGraphParams, checkpointer: Checkpointer) {
  const chargeCard = tool({
    name: "charge_card",
    description: "Charge the saved card for an order.",
    schema: z.object({ order_id: z.string() }),
    idempotencyKey: (args) => `order-${args.order_id}-charge`,
    onInDoubt: "interrupt",
    async execute(args) {
      // The server running this is SIGKILLed while it waits: nothing is ever charged.
      if (params.hangCharges) await new Promise(() => {});
      appendEffect(params.effectLog, { line: `charged order ${args.order_id}`, pid: process.pid });
      return `Charged order ${args.order_id}`;
    },
  });
  const slowExport = tool({
    name: "slow_export",
    description: "Export the account's data (hangs until stopped).",
    schema: z.object({}),
    execute: (_args, ctx) =>
      new Promise<string>((_resolve, reject) => {
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
      }),
  });
  const approveRefund = tool({
    name: "approve_refund",
    description: "Ask a human to approve a refund.",
    schema: z.object({ who: z.string() }),
    execute: (args) => {
      const answer = interrupt(
        { question: `Refund ${args.who}?`, approved: false, amount_cents: 500 },
        { message: "A refund needs your approval" },
      );
      return `${args.who}: ${JSON.stringify(answer)}`;
    },
  });

  async function model(state: BaseState, ctx: NodeContext) {
    const last = state.messages.at(-1);
    if (last?.role === "tool") {
      const results = state.messages.filter((m) => m.role === "tool").map((m) => Message.text(m));
      return Message.assistant(`Done: ${results.at(-1)}`);
    }
    const text = last ? Message.text(last) : "";
    const charge = /^charge (\S+)/.exec(text);
    if (charge) return callTool("charge_card", { order_id: charge[1] });
    const refund = /^refund (\S+)/.exec(text);
    if (refund) return callTool("approve_refund", { who: refund[1] });
    if (text === "remind me") {
      await ctx.sleep(3_600_000);
      return Message.assistant("Reminder");
    }
    if (text === "export") {
      const reply = callTool("slow_export", {}, "Exporting your data now");
      for (const word of ["Exporting ", "your ", "data ", "now"]) {
        ctx.emit({ type: "message_delta", node: ctx.node, messageId: reply.id, delta: word });
        await sleep(400, undefined, { signal: ctx.signal });
      }
      return reply;
    }
    return Message.assistant(`Echo: ${text}`);
  }

  return supportAgent({
    model,
    tools: [chargeCard, slowExport, approveRefund],
    checkpointer,
    // A claim left by a killed server is in doubt after 300 ms, so the test need not wait long.
    stopPollIntervalMs: 100,
    claimStaleAfterMs: 300,
    logger: silentLogger,
  });
}

function callTool(name: string, args: object, text = "") {
  return Message.assistant(text, [{ id: "call_1", name, arguments: JSON.stringify(args) }]);
}
