import { describe, expect, it } from "vitest";
import type { StateHistoryEntry } from "@tenxgraph/client";
import { describeChanges, versionChanges } from "./version-changes.js";

function version(n: number, values: Record<string, unknown>, messages: number): StateHistoryEntry {
  return {
    version: n,
    step: n,
    node: "MAIN",
    next_node: null,
    status: "completed",
    created_at: "2026-01-01T00:00:00Z",
    run_id: null,
    trace_id: null,
    parent_version: n > 1 ? n - 1 : null,
    values,
    message_count: messages,
    interrupts: [],
  };
}

describe("versionChanges", () => {
  it("counts the messages added and names the fields whose value changed", () => {
    const before = version(1, { order: "7", total: 4200, note: null }, 1);
    const after = version(2, { order: "7", total: 4300, messages: [1, 2, 3] }, 3);
    const changes = versionChanges(after, before);
    expect(changes).toEqual({ messagesAdded: 2, fieldsChanged: ["total", "note"] });
    expect(describeChanges(changes)).toBe("+2 messages; total, note");
  });

  it("measures the first version from nothing, and says when nothing changed", () => {
    expect(describeChanges(versionChanges(version(1, { a: 1 }, 1), undefined))).toBe(
      "+1 message; a",
    );
    const same = version(3, { a: 1 }, 2);
    expect(describeChanges(versionChanges(same, { ...same, version: 2 }))).toBe("no change");
  });
});
