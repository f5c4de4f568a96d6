import type { StreamChunk, WireMessage } from "@tenxgraph/client";
import { describe, expect, it } from "vitest";
import { applyChunk, startedRun, type LiveRun } from "./live-run.js";

function chunk(fields: Partial<StreamChunk>): StreamChunk {
  return {
    event: "updates",
    message: null,
    state: null,
    data: null,
    thread_id: "t1",
    run_id: "r1",
    metadata: {},
    timestamp: 0,
    ...fields,
  };
}

function message(id: string, text: string, delta = false): WireMessage {
  return {
    message_id: id,
    role: "assistant",
    content: [{ type: "text", text }],
    delta,
    tools_calls: null,
    reasoning: null,
    timestamp: 0,
    metadata: {},
    usages: null,
    raw: null,
    parsed_content: null,
  };
}

const updates = (data: Record<string, unknown>) => chunk({ event: "updates", data });

function play(...chunks: StreamChunk[]): LiveRun {
  return chunks.reduce(applyChunk, startedRun("t1"));
}

describe("applyChunk", () => {
  it("gathers token deltas into a draft that the whole message replaces", () => {
    const writing = play(
      chunk({ event: "message", message: message("m1", "Hel", true) }),
      chunk({ event: "message", message: message("m1", "lo", true) }),
    );
    expect(writing.drafts).toEqual({ m1: "Hello" });
    expect(writing.messages).toEqual([]);
    const written = applyChunk(
      writing,
      chunk({ event: "message", message: message("m1", "Hello") }),
    );
    expect(written.drafts).toEqual({});
    expect(written.messages.map((m) => m.message_id)).toEqual(["m1"]);
  });

  it("lists steps and tool calls in order, and remembers which calls were replayed", () => {
    const run = play(
      updates({ status: "node_invoked", node: "TOOL", step: 1 }),
      updates({
        status: "tool_started",
        node: "TOOL",
        tool_name: "charge",
        tool_call_id: "c1",
        key: "k1",
      }),
      updates({
        status: "tool_completed",
        tool_name: "charge",
        tool_call_id: "c1",
        key: "k1",
        replayed: true,
        is_error: false,
      }),
      updates({
        status: "tool_completed",
        tool_name: "mail",
        tool_call_id: "c2",
        key: "k2",
        replayed: false,
        is_error: true,
      }),
    );
    expect(run.activity.map((a) => a.kind)).toEqual([
      "node",
      "tool_started",
      "tool_completed",
      "tool_completed",
    ]);
    expect(run.replayed).toEqual({ k1: true, k2: false });
    expect(run.status).toBe("running");
  });

  it("keeps the interrupts the run paused with when its end repeats the status without them", () => {
    const interrupt = { id: "i1", value: { question: "ok?" }, node: "TOOL" };
    const run = play(
      updates({ status: "interrupted", reason: "interrupt", interrupts: [interrupt] }),
      updates({ status: "interrupted", run_status: "interrupted", version: 4 }),
    );
    expect(run.status).toBe("interrupted");
    expect(run.interrupts).toEqual([interrupt]);
    expect(run.version).toBe(4);
  });

  it("ends completed, stopped, or failed with the error's code and reason", () => {
    expect(play(updates({ status: "graph_invoked", version: 3 }))).toMatchObject({
      status: "completed",
      version: 3,
    });
    expect(play(updates({ status: "stopped", version: 2 })).status).toBe("stopped");
    const failed = play(
      chunk({ event: "error", data: { code: "NODE_TIMEOUT_001", reason: "slow" } }),
    );
    expect(failed).toMatchObject({
      status: "failed",
      error: { code: "NODE_TIMEOUT_001", reason: "slow" },
    });
  });

  it("takes the thread and run ids from the chunks", () => {
    const run = applyChunk(startedRun(null), chunk({ thread_id: "new-thread", run_id: "r9" }));
    expect(run).toMatchObject({ threadId: "new-thread", runId: "r9" });
  });
});
