import type { LedgerEntry, WireMessage } from "@tenxgraph/client";
import { describe, expect, it } from "vitest";
import { failureOf, ledgerRowId, linkCalls, transcriptCalls } from "./ledger-links.js";

function assistant(id: string, calls: [string, string][]): WireMessage {
  return {
    message_id: id,
    role: "assistant",
    content: [],
    delta: false,
    tools_calls: calls.map(([callId, name]) => ({
      id: callId,
      type: "function",
      function: { name, arguments: "{}" },
    })),
    reasoning: null,
    timestamp: 0,
    metadata: {},
    usages: null,
    raw: null,
    parsed_content: null,
  };
}

function entry(key: string, toolName: string, result?: unknown): LedgerEntry {
  return {
    key,
    tool_name: toolName,
    status: result === undefined ? "started" : "completed",
    attempt: 1,
    owner_run_id: null,
    started_at: "2026-01-01T00:00:00Z",
    ...(result === undefined ? {} : { result }),
  };
}

describe("linkCalls", () => {
  const messages = [
    assistant("m1", [
      ["c1", "lookup"],
      ["c2", "charge"],
    ]),
    assistant("m2", [["c1", "charge"]]),
  ];
  const calls = transcriptCalls(messages);

  it("links an entry keyed by the call, and a domain-keyed one by its result's origin", () => {
    const byKey = entry("m1:c1", "lookup", { __kind__: "raw", value: 1 });
    const byOrigin = entry("charge:order-2", "charge", {
      __kind__: "raw",
      value: 2,
      origin: "m2:c1",
    });
    const links = linkCalls(calls, [byKey, byOrigin]);
    expect(links.get("m1:c1")).toBe(byKey);
    expect(links.get("m2:c1")).toBe(byOrigin);
    expect(links.has("m1:c2")).toBe(false);
  });

  it("gives a domain-keyed entry without a result to the first call of its tool left unlinked", () => {
    const recorded = entry("charge:order-1", "charge", {
      __kind__: "raw",
      value: 1,
      origin: "m1:c2",
    });
    const pending = entry("charge:order-2", "charge");
    const links = linkCalls(calls, [pending, recorded]);
    expect(links.get("m1:c2")).toBe(recorded);
    expect(links.get("m2:c1")).toBe(pending);
  });
});

describe("failureOf", () => {
  it("is the recorded code, empty for a failure without one, null for a success", () => {
    const failed = { __kind__: "message", value: { isError: true }, errorCode: "TOOL_TIMEOUT_001" };
    expect(failureOf(entry("k", "t", failed))).toBe("TOOL_TIMEOUT_001");
    expect(failureOf(entry("k", "t", { __kind__: "message", value: { isError: true } }))).toBe("");
    expect(failureOf(entry("k", "t", { __kind__: "raw", value: "ok" }))).toBeNull();
    expect(failureOf(entry("k", "t"))).toBeNull();
  });
});

it("ledgerRowId makes a DOM id of any key", () => {
  expect(ledgerRowId("charge_card:order 9/x")).toBe("ledger-charge_card_order_9_x");
});
