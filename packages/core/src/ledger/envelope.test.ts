import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import {
  callsTurn,
  recordingLogger,
  supportAgent,
  testMeter,
  toolText,
} from "../support/helpers.js";
import { tool } from "../tools/tool.js";
import { decodeEnvelope, messageEnvelope } from "./envelope.js";
import type { CompletedLedgerEntry } from "../storage/ledger-entry.js";
import { ledgerKey } from "./ledger-key.js";

describe("messageEnvelope / decodeEnvelope", () => {
  const recorded = Message.tool("call_1", "Charged 42 USD");

  it("stores a tool message under __kind__ 'message', with state changes only when there are some", () => {
    expect(messageEnvelope(recorded, {})).toEqual({ __kind__: "message", value: recorded });
    expect(messageEnvelope(recorded, { charged: true })).toEqual({
      __kind__: "message",
      value: recorded,
      stateChanges: { charged: true },
    });
  });

  it("reads a message envelope back as the same message, also after a JSON round trip", () => {
    const stored = JSON.parse(JSON.stringify(messageEnvelope(recorded, { charged: true })));
    expect(decodeEnvelope(stored, "call_1")).toEqual({
      message: recorded,
      stateChanges: { charged: true },
    });
    expect(decodeEnvelope({ __kind__: "message", value: recorded }, "call_1")).toEqual({
      message: recorded,
      stateChanges: {},
    });
  });

  it("stores a call's ctx.update updates only when it made some, and reads them back in order", () => {
    expect(messageEnvelope(recorded, {}, null, null, [])).toEqual({
      __kind__: "message",
      value: recorded,
    });
    const updates = [{ total: 1 }, { tags: ["vip"] }];
    const stored = JSON.parse(
      JSON.stringify(messageEnvelope(recorded, {}, "m-1:call_1", null, updates)),
    );
    expect(stored.updates).toEqual(updates);
    expect(decodeEnvelope(stored, "call_1")).toEqual({
      message: recorded,
      stateChanges: {},
      updates,
      origin: "m-1:call_1",
    });
  });

  it("treats an envelope with malformed updates as no record", () => {
    const envelope = messageEnvelope(recorded, {});
    for (const updates of [{ total: 1 }, [1], [null], [[{ total: 1 }]], "x"]) {
      expect(decodeEnvelope({ ...envelope, updates }, "call_1")).toBeNull();
    }
  });

  it("answers another call with a new message carrying the recorded content", () => {
    const error = Message.tool("call_1", "Tool 'x' failed: [TOOL_ERROR_001] no", { isError: true });
    const decoded = decodeEnvelope(messageEnvelope(error, {}), "call_7");
    expect(decoded?.message).toMatchObject({
      role: "tool",
      toolCallId: "call_7",
      content: error.content,
      isError: true,
    });
    expect(decoded?.message.id).not.toBe(error.id);
  });

  it("turns a raw value into a tool message for the asking call", () => {
    expect(decodeEnvelope({ __kind__: "raw", value: "ok" }, "call_2")?.message).toMatchObject({
      role: "tool",
      toolCallId: "call_2",
      content: "ok",
    });
    expect(
      decodeEnvelope({ __kind__: "raw", value: { n: 1 }, stateChanges: { a: 1 } }, "c"),
    ).toMatchObject({ message: { content: '{"n":1}' }, stateChanges: { a: 1 } });
    expect(decodeEnvelope({ __kind__: "raw", value: null }, "c")?.message.content).toBe("null");
  });

  it("reads null state changes (a store's JSON null) as no changes", () => {
    expect(
      decodeEnvelope({ __kind__: "raw", value: "ok", stateChanges: null }, "c")?.stateChanges,
    ).toEqual({});
  });

  it.each([
    ["null", null],
    ["a string", "Charged 42 USD"],
    ["a number", 42],
    ["an array", [{ __kind__: "raw", value: 1 }]],
    ["an object without __kind__", { foo: 1 }],
    ["an unknown kind", { __kind__: "json", value: "x" }],
    ["a raw envelope without value", { __kind__: "raw" }],
    ["a message envelope with a bad value", { __kind__: "message", value: { bad: true } }],
    [
      "a message envelope holding a user message",
      { __kind__: "message", value: Message.user("hi") },
    ],
    [
      "state changes that are not an object",
      { __kind__: "message", value: Message.tool("call_1", "ok"), stateChanges: [1] },
    ],
  ])("reads %s as no record (null)", (_label, stored) => {
    expect(decodeEnvelope(stored, "call_1")).toBeNull();
  });
});

describe("ledgerKey", () => {
  it("joins the message id and the call id, and is null when either is missing", () => {
    expect(ledgerKey("m-1", "call_1")).toBe("m-1:call_1");
    expect(ledgerKey("m-2", "call_1")).not.toBe(ledgerKey("m-1", "call_1"));
    expect(ledgerKey(undefined, "call_1")).toBeNull();
    expect(ledgerKey("m-1", "")).toBeNull();
  });
});

describe("records in the ledger", () => {
  it("lists entries with their envelope, owner and times; deleteThread removes them", async () => {
    const lookupOrder = tool({
      name: "lookup_order",
      description: "Look up an order.",
      schema: z.object({ order_id: z.string() }),
      execute: () => "order 4821: 42 USD",
    });
    const app = supportAgent({
      model: [callsTurn("m-1", [["lookup_order", { order_id: "4821" }]]), "ok"],
      tools: [lookupOrder],
    });
    const result = await app.invoke({ messages: [Message.user("look")] }, { threadId: "t-list" });

    const [entry] = (await app.getToolLedger({ threadId: "t-list" })) as CompletedLedgerEntry[];
    expect(entry).toMatchObject({
      key: "m-1:call_1",
      toolName: "lookup_order",
      status: "completed",
      attempt: 1,
      ownerRunId: result.runId,
      result: { __kind__: "message", value: { role: "tool", content: "order 4821: 42 USD" } },
    });
    expect(Date.parse(entry!.completedAt)).toBeGreaterThanOrEqual(Date.parse(entry!.startedAt));
    await app.deleteThread({ threadId: "t-list" });
    expect(await app.getToolLedger({ threadId: "t-list" })).toEqual([]);
  });

  it.each([
    ["an object without an envelope", { foo: 1 }],
    [
      "a message envelope whose value is not a message",
      { __kind__: "message", value: { bad: true } },
    ],
    ["a bare string", "Charged 42 USD"],
  ])("counts %s as no record: the tool runs and its result replaces it", async (_label, bad) => {
    const checkpointer = new InMemoryCheckpointer();
    const [claim] = await checkpointer.claimCalls("t-bad", [
      {
        key: "m-1:call_1",
        toolName: "charge_card",
        ownerRunId: "old-run",
        leaseMs: 3000,
        expectedAttempt: 0,
      },
    ]);
    expect(claim?.won).toBe(true);
    expect(await checkpointer.completeCall("t-bad", { key: "m-1:call_1", attempt: 1 }, bad)).toBe(
      true,
    );
    const effects: string[] = [];
    const chargeCard = tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: z.object({ order_id: z.string() }),
      execute: (args) => {
        effects.push(`charge ${args.order_id}`);
        return "Charged 42 USD";
      },
    });
    const logger = recordingLogger();
    const metrics = testMeter();
    const app = supportAgent({
      model: [callsTurn("m-1", [["charge_card", { order_id: "4821" }]]), "ok"],
      tools: [chargeCard],
      checkpointer,
      logger,
      meter: metrics.meter,
    });

    const result = await app.invoke({ messages: [Message.user("charge")] }, { threadId: "t-bad" });

    expect(effects).toEqual(["charge 4821"]);
    expect(toolText(result.state, "call_1")).toBe("Charged 42 USD");
    expect(await metrics.sum("tenxgraph.tool.ledger_hits")).toBe(0);
    expect(logger.find("warn", "not a well-formed result")[0]?.fields).toMatchObject({
      key: "m-1:call_1",
      tool: "charge_card",
    });
    const [entry] = await app.getToolLedger({ threadId: "t-bad" });
    expect(entry).toMatchObject({ status: "completed", attempt: 2, ownerRunId: result.runId });
    expect(decodeEnvelope((entry as { result: unknown }).result, "call_1")?.message.content).toBe(
      "Charged 42 USD",
    );
  });
});
