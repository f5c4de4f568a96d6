import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import {
  callsTurn,
  recordingLogger,
  supportAgent,
  testMeter,
  toolMessages,
  toolText,
  untilAborted,
} from "../support/helpers.js";
import type { ToolContext } from "../tools/tool-context.js";
import { tool } from "../tools/tool.js";
import { messageEnvelope } from "./envelope.js";
import { user } from "../support/ledger-tools.js";

describe("domain idempotency keys", () => {
  function keyedCharge(effects: string[], contexts: ToolContext[]) {
    return tool({
      name: "charge_card",
      description: "Charge the card, once per order.",
      schema: z.object({ order_id: z.string(), amount_cents: z.number() }),
      idempotencyKey: (args) => `order-${args.order_id}-charge`,
      execute: (args, ctx) => {
        contexts.push(ctx);
        effects.push(`charge ${args.order_id}`);
        return `Charged ${args.amount_cents / 100} USD`;
      },
    });
  }

  it.each([
    ["its own call id", "call_7"],
    ["the reused call_1", "call_1"],
  ])(
    "runs the business fact once across turns; the later turn, with %s, gets the recorded result",
    async (_label, secondId) => {
      const effects: string[] = [];
      const contexts: ToolContext[] = [];
      const metrics = testMeter();
      const args = { order_id: "4821", amount_cents: 4200 };
      const app = supportAgent({
        model: [
          callsTurn("m-1", [["charge_card", args, "call_1"]]),
          "Charged.",
          callsTurn("m-2", [["charge_card", args, secondId]]),
          "It was already charged.",
        ],
        tools: [keyedCharge(effects, contexts)],
        meter: metrics.meter,
      });

      await app.invoke(user("charge order 4821"), { threadId: "t-domain" });
      const result = await app.invoke(user("charge it again"), { threadId: "t-domain" });

      expect(effects).toEqual(["charge 4821"]);
      expect(contexts.map((c) => [c.idempotencyKey, c.messageId, c.toolCallId])).toEqual([
        ["order-4821-charge", "m-1", "call_1"],
      ]);
      const answers = toolMessages(result.state);
      expect(answers.map((m) => [m.toolCallId, Message.text(m)])).toEqual([
        ["call_1", "Charged 42 USD"],
        [secondId, "Charged 42 USD"],
      ]);
      expect(new Set(answers.map((m) => m.id)).size).toBe(2);
      expect(await metrics.sum("tenxgraph.tool.ledger_hits")).toBe(1);
      const ledger = await app.getToolLedger({ threadId: "t-domain" });
      expect(ledger.map((e) => [e.key, e.status, e.attempt])).toEqual([
        ["charge_card:order-4821-charge", "completed", 1],
      ]);
    },
  );

  it("runs the tool again for a later call when the recorded result is a failure", async () => {
    const effects: string[] = [];
    let declines = 1;
    const charge = tool({
      name: "charge_card",
      description: "Charge the card, once per order.",
      schema: z.object({ order_id: z.string() }),
      idempotencyKey: (args) => `order-${args.order_id}-charge`,
      execute: (args) => {
        effects.push(`charge ${args.order_id}`);
        if (declines-- > 0) throw new Error("card declined");
        return "Charged";
      },
    });
    const args = { order_id: "4821" };
    const app = supportAgent({
      model: [
        callsTurn("m-1", [["charge_card", args, "call_1"]]),
        "It was declined.",
        callsTurn("m-2", [["charge_card", args, "call_1"]]),
        "Charged now.",
      ],
      tools: [charge],
    });

    const first = await app.invoke(user("charge"), { threadId: "t-declined" });
    expect(toolText(first.state, "call_1")).toContain("[TOOL_ERROR_001] card declined");
    const second = await app.invoke(user("try again"), { threadId: "t-declined" });

    // The failed fact did not happen, so the second call charges; the first turn's error stays.
    expect(effects).toEqual(["charge 4821", "charge 4821"]);
    expect(toolMessages(second.state).map((m) => Message.text(m))).toEqual([
      "Tool 'charge_card' failed: [TOOL_ERROR_001] card declined",
      "Charged",
    ]);
    const ledger = await app.getToolLedger({ threadId: "t-declined" });
    expect(ledger.map((e) => [e.key, e.status, e.attempt])).toEqual([
      ["charge_card:order-4821-charge", "completed", 2],
    ]);
  });

  it.each(["retry", "fail"] as const)(
    "treats a timeout recorded under the domain key by an earlier turn as in doubt (%s)",
    async (policy) => {
      const effects: string[] = [];
      const charge = tool({
        name: "charge_card",
        description: "Charge the card, once per order.",
        schema: z.object({ order_id: z.string() }),
        idempotencyKey: (args) => `order-${args.order_id}-charge`,
        timeout: 0.05,
        onInDoubt: policy,
        execute: (args, ctx) => {
          effects.push(`charge ${args.order_id}`);
          return untilAborted(ctx.signal); // may have charged; the outcome is unknown
        },
      });
      const args = { order_id: "4821" };
      const app = supportAgent({
        model: [
          callsTurn("m-1", [["charge_card", args, "call_1"]]),
          "It timed out.",
          callsTurn("m-2", [["charge_card", args, "call_1"]]),
          "Still unknown.",
        ],
        tools: [charge],
      });
      const timedOut =
        "Tool 'charge_card' failed: [NODE_TIMEOUT_002] Tool 'charge_card' timed out after 0.05 s";

      const first = await app.invoke(user("charge"), { threadId: "t-timeout-fact" });
      expect(toolText(first.state, "call_1")).toBe(timedOut);
      const second = await app.invoke(user("try again"), { threadId: "t-timeout-fact" });

      // A timeout says nothing of whether the charge happened: the tool's policy decides, with
      // the same idempotency key for the provider. It is never replayed as if it were the fact.
      const [, answer] = toolMessages(second.state).map((m) => Message.text(m));
      const ledger = await app.getToolLedger({ threadId: "t-timeout-fact" });
      expect(ledger.map((e) => [e.key, e.status, e.attempt])).toEqual([
        ["charge_card:order-4821-charge", "completed", 2],
      ]);
      if (policy === "retry") {
        expect(effects).toEqual(["charge 4821", "charge 4821"]);
        expect(answer).toBe(timedOut);
      } else {
        expect(effects).toEqual(["charge 4821"]);
        expect(answer).toContain("[TOOL_IN_DOUBT_001]");
      }
    },
  );

  it("replaying another turn's fact does not roll state fields back to that turn's values", async () => {
    type Log = { messages: Message[]; log: string[] };
    const charge = tool<z.ZodObject<{ order_id: z.ZodString }>, Log>({
      name: "charge_card",
      description: "Charge the card, once per order.",
      schema: z.object({ order_id: z.string() }),
      idempotencyKey: (args) => `order-${args.order_id}-charge`,
      execute: (args, ctx) => {
        ctx.state.log = [...ctx.state.log, `charged ${args.order_id}`];
        return "Charged";
      },
    });
    const email = tool<z.ZodObject<Record<string, never>>, Log>({
      name: "send_email",
      description: "Email the customer.",
      schema: z.object({}),
      execute: (_args, ctx) => {
        ctx.state.log = [...ctx.state.log, "emailed"];
        return "Sent";
      },
    });
    const app = supportAgent<Log>({
      model: [
        callsTurn("m-1", [["charge_card", { order_id: "4821" }]]),
        "Charged.",
        callsTurn("m-2", [["send_email", {}]]),
        "Sent.",
        callsTurn("m-3", [["charge_card", { order_id: "4821" }]]),
        "It was already charged.",
      ],
      tools: [charge, email],
      state: { initialState: { log: [] } },
    });
    const threadId = "t-no-rollback";
    await app.invoke(user("charge"), { threadId });
    await app.invoke(user("email me"), { threadId });
    const result = await app.invoke(user("charge again"), { threadId });

    expect(result.state.log).toEqual(["charged 4821", "emailed"]);
    expect((await app.getState({ threadId }))?.values.log).toEqual(["charged 4821", "emailed"]);
    expect(toolMessages(result.state).map((m) => Message.text(m))).toEqual([
      "Charged",
      "Sent",
      "Charged",
    ]);
  });

  it("runs once when one message asks twice for the same domain key", async () => {
    const effects: string[] = [];
    const contexts: ToolContext[] = [];
    const args = { order_id: "4821", amount_cents: 4200 };
    const app = supportAgent({
      model: [
        callsTurn("m-1", [
          ["charge_card", args],
          ["charge_card", args],
        ]),
        "ok",
      ],
      tools: [keyedCharge(effects, contexts)],
    });
    const result = await app.invoke(user("charge"), { threadId: "t-twice" });

    expect(effects).toEqual(["charge 4821"]);
    expect(toolMessages(result.state).map((m) => [m.toolCallId, Message.text(m)])).toEqual([
      ["call_1", "Charged 42 USD"],
      ["call_2", "Charged 42 USD"],
    ]);
  });

  it("never answers a call with another tool's entry found under its own key: it runs, and says so", async () => {
    const effects: string[] = [];
    const contexts: ToolContext[] = [];
    const checkpointer = new InMemoryCheckpointer();
    const logger = recordingLogger();
    const args = { order_id: "4821", amount_cents: 4200 };
    const app = supportAgent({
      model: ["Hello.", callsTurn("m-2", [["charge_card", args]]), "ok"],
      tools: [keyedCharge(effects, contexts)],
      checkpointer,
      logger,
    });
    const threadId = "t-foreign";
    await app.invoke(user("hi"), { threadId });
    // Another tool's fact under exactly this call's scoped key (a message key that collides).
    const key = "charge_card:order-4821-charge";
    await checkpointer.claimCalls(threadId, [
      { key, toolName: "refund_payment", ownerRunId: "other", leaseMs: 3000, expectedAttempt: 0 },
    ]);
    const refunded = messageEnvelope(Message.tool("call_1", "Refunded"), {});
    await checkpointer.completeCall(threadId, { key, attempt: 1 }, refunded);

    const result = await app.invoke(user("charge"), { threadId });
    expect(effects).toEqual(["charge 4821"]);
    expect(toolText(result.state, "call_1")).toBe("Charged 42 USD");
    expect(logger.find("warn", "belongs to another tool")[0]?.fields).toMatchObject({
      key,
      recordedBy: "refund_payment",
    });
    expect(await app.getToolLedger({ threadId })).toMatchObject([
      { key, toolName: "refund_payment", status: "completed", attempt: 1 },
    ]);
  });
});
