import { z } from "zod";
import { END } from "../../definition/edges.js";
import { StateGraph } from "../../graph/state-graph.js";
import { messageEnvelope } from "../../ledger/envelope.js";
import { silentLogger } from "../../events/logger.js";
import { Message } from "../../messages/message.js";
import type { Checkpointer } from "../../storage/checkpointer.js";
import { ToolNode } from "../../tools/tool-node.js";
import { tool } from "../../tools/tool.js";
import { ScriptedModel } from "../scripted-model.js";
import { LEASE_MS, newThreadId } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** Both tools declare the same domain key: one fact per order, but not the same fact. */
const ORDER_KEY = "order-4821";

/** `charge_card` and `refund_payment`, each with the domain key {@link ORDER_KEY}. */
function orderTools(effects: string[], keys: string[]) {
  const schema = z.object({ order_id: z.string() });
  const charge = tool({
    name: "charge_card",
    description: "Charge the card, once per order.",
    schema,
    idempotencyKey: (args) => `order-${args.order_id}`,
    execute: (args, ctx) => {
      keys.push(ctx.idempotencyKey);
      effects.push(`charge ${args.order_id}`);
      return `Charged order ${args.order_id}`;
    },
  });
  const refund = tool({
    name: "refund_payment",
    description: "Refund the order, once per order.",
    schema,
    idempotencyKey: (args) => `order-${args.order_id}`,
    execute: (args, ctx) => {
      keys.push(ctx.idempotencyKey);
      effects.push(`refund ${args.order_id}`);
      return `Refunded order ${args.order_id}`;
    },
  });
  return [charge, refund];
}

/**
 * A support agent on `checkpointer`: the model first says hello (so the thread exists), then
 * asks for `calls` in one message, then says "Done.".
 */
function orderAgent(
  checkpointer: Checkpointer,
  calls: string[],
  effects: string[],
  keys: string[],
) {
  const model = new ScriptedModel([
    "Hello.",
    { toolCalls: calls.map((name) => ({ name, args: { order_id: "4821" } })) },
    "Done.",
  ]);
  return new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode(orderTools(effects, keys)))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls?.length ? "TOOL" : END;
    })
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
}

const user = (text: string) => ({ messages: [Message.user(text)] });

/** The texts of the tool messages of a transcript, in order. */
function toolTexts(messages: readonly Message[]): string[] {
  return messages.filter((m) => m.role === "tool").map((m) => Message.text(m));
}

/**
 * The runtime's domain keys on this store: a ledger entry recorded by one tool never answers a
 * call of another tool, and entries written before domain keys were scoped by tool (under the
 * bare domain key) still count for the tool that wrote them.
 */
export function ledgerToolKeysConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;
  describe("domain keys are per tool", () => {
    it("runs two tools declaring the same domain key once each, each answered with its own result", async () => {
      const effects: string[] = [];
      const keys: string[] = [];
      const app = orderAgent(get(), ["charge_card", "refund_payment"], effects, keys);
      const threadId = newThreadId();
      await app.invoke(user("hi"), { threadId });
      const result = await app.invoke(user("charge, then refund"), { threadId });

      expect(effects.sort()).toEqual(["charge 4821", "refund 4821"]);
      // The tool still gets exactly the domain key it declared.
      expect(keys).toEqual([ORDER_KEY, ORDER_KEY]);
      expect(toolTexts(result.state.messages)).toEqual([
        "Charged order 4821",
        "Refunded order 4821",
      ]);
      const ledger = await app.getToolLedger({ threadId });
      expect(ledger.map((e) => [e.toolName, e.status]).sort()).toEqual([
        ["charge_card", "completed"],
        ["refund_payment", "completed"],
      ]);
    });

    it("honours a result recorded under the bare domain key by the same tool (before keys were scoped)", async () => {
      const effects: string[] = [];
      const app = orderAgent(get(), ["charge_card"], effects, []);
      const threadId = newThreadId();
      await app.invoke(user("hi"), { threadId });
      await recordUnscoped(get(), threadId, "charge_card", "Charged order 4821 (before upgrade)");

      const result = await app.invoke(user("charge"), { threadId });
      expect(effects).toEqual([]);
      expect(toolTexts(result.state.messages)).toEqual(["Charged order 4821 (before upgrade)"]);
    });

    it("never answers a call with an entry another tool recorded under the bare domain key", async () => {
      const effects: string[] = [];
      const app = orderAgent(get(), ["refund_payment"], effects, []);
      const threadId = newThreadId();
      await app.invoke(user("hi"), { threadId });
      await recordUnscoped(get(), threadId, "charge_card", "Charged order 4821 (before upgrade)");

      const result = await app.invoke(user("refund"), { threadId });
      expect(effects).toEqual(["refund 4821"]);
      expect(toolTexts(result.state.messages)).toEqual(["Refunded order 4821"]);
      // The charge's entry is left as it was.
      const [legacy] = await get().getCalls(threadId, [ORDER_KEY]);
      expect(legacy).toMatchObject({ toolName: "charge_card", status: "completed", attempt: 1 });
    });
  });
}

/** What the previous version left: a completed entry under the bare domain key. */
async function recordUnscoped(
  checkpointer: Checkpointer,
  threadId: string,
  toolName: string,
  text: string,
): Promise<void> {
  const claim = { key: ORDER_KEY, toolName, ownerRunId: "old-version", leaseMs: LEASE_MS };
  const [won] = await checkpointer.claimCalls(threadId, [{ ...claim, expectedAttempt: 0 }]);
  if (!won?.won) throw new Error("conformance: could not write the pre-upgrade entry");
  const envelope = messageEnvelope(Message.tool("call_9", text), {}, "m-old:call_9");
  await checkpointer.completeCall(threadId, { key: ORDER_KEY, attempt: 1 }, envelope);
}
