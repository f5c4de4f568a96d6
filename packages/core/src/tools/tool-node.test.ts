import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolError } from "../errors/errors.js";
import { StateGraph } from "../graph/state-graph.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import type { CompletedLedgerEntry } from "../storage/ledger-entry.js";
import { Message, type ToolMessage } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import {
  callsTurn,
  collectEvents,
  deferred,
  nextMacrotask,
  ofType,
  pause,
  recordingLogger,
  supportAgent,
  testMeter,
  toolMessages,
  toolText,
  untilAborted,
  withoutStepWrites,
} from "../support/helpers.js";
import type { ToolContext } from "./tool-context.js";
import { ToolNode } from "./tool-node.js";
import { tool } from "./tool.js";

const orderArgs = z.object({ order_id: z.string() });

/** The seed's three tools, each logging its side effect to `effects`. */
function supportTools(effects: string[]) {
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Look up an order.",
    schema: orderArgs,
    execute: (args) => {
      effects.push(`lookup ${args.order_id}`);
      return { order_id: args.order_id, amount_cents: 4200 };
    },
  });
  const chargeCard = tool({
    name: "charge_card",
    description: "Charge the card.",
    schema: z.object({ order_id: z.string(), amount_cents: z.number().int() }),
    execute: (args) => {
      effects.push(`charge ${args.order_id} ${args.amount_cents}`);
      return `Charged ${args.amount_cents / 100} USD`;
    },
  });
  const sendReceipt = tool({
    name: "send_receipt",
    description: "Email the receipt.",
    schema: orderArgs,
    execute: async (args) => {
      await pause(5);
      effects.push(`receipt ${args.order_id}`);
      return "Receipt sent";
    },
  });
  return { lookupOrder, chargeCard, sendReceipt };
}

const user = (text: string) => ({ messages: [Message.user(text)] });

describe("ToolNode: parallel calls and failures", () => {
  it("runs three calls; one throws: siblings are recorded, the model gets one error message, the node continues", async () => {
    const effects: string[] = [];
    const { lookupOrder, sendReceipt } = supportTools(effects);
    const chargeCard = tool({
      name: "charge_card",
      description: "Charge the card.",
      schema: orderArgs,
      execute: () => {
        effects.push("charge attempted");
        throw new Error("card network down");
      },
    });
    const metrics = testMeter();
    const app = supportAgent({
      model: [
        callsTurn("m-1", [
          ["lookup_order", { order_id: "4821" }],
          ["charge_card", { order_id: "4821" }],
          ["send_receipt", { order_id: "4821" }],
        ]),
        "The card could not be charged.",
      ],
      tools: [lookupOrder, chargeCard, sendReceipt],
      meter: metrics.meter,
      logger: recordingLogger(),
    });

    const result = await app.invoke(user("charge order 4821"), { threadId: "t-par" });

    expect(result.status).toBe("completed");
    expect(effects.sort()).toEqual(["charge attempted", "lookup 4821", "receipt 4821"]);
    const tools = toolMessages(result.state);
    expect(tools.map((m) => m.toolCallId)).toEqual(["call_1", "call_2", "call_3"]);
    const errors = tools.filter((m) => m.isError);
    expect(errors).toHaveLength(1);
    expect(Message.text(errors[0]!)).toBe(
      "Tool 'charge_card' failed: [TOOL_ERROR_001] card network down",
    );
    expect(toolText(result.state, "call_1")).toBe('{"order_id":"4821","amount_cents":4200}');
    expect(toolText(result.state, "call_3")).toBe("Receipt sent");
    expect(Message.text(result.state.messages.at(-1)!)).toBe("The card could not be charged.");

    const ledger = await app.getToolLedger({ threadId: "t-par" });
    const byKey = new Map(ledger.map((e) => [e.key, e]));
    for (const key of ["m-1:call_1", "m-1:call_3"]) {
      expect(byKey.get(key)).toMatchObject({ status: "completed", attempt: 1 });
    }
    expect(byKey.get("m-1:call_1")?.toolName).toBe("lookup_order");
    expect(byKey.get("m-1:call_3")?.toolName).toBe("send_receipt");
    expect(await metrics.sum("tenxgraph.tool.errors")).toBe(1);
  });

  it("runs 12 parallel calls without a MaxListenersExceededWarning", async () => {
    const quick = tool({
      name: "quick",
      description: "Answers at once.",
      schema: z.object({ n: z.number() }),
      execute: async (args) => {
        await nextMacrotask(); // all 12 are in flight together
        return `done ${args.n}`;
      },
    });
    const calls = Array.from({ length: 12 }, (_, n) => ["quick", { n }] as const);
    const app = supportAgent({ model: [callsTurn("m-1", calls), "ok"], tools: [quick] });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const result = await app.invoke(user("go"), { threadId: "t-many" });
      expect(toolMessages(result.state)).toHaveLength(12);
      await nextMacrotask(); // warnings are emitted on the next tick
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
  });

  it("answers malformed JSON and schema failures with TOOL_ARGS_001, never runs the tool, writes no ledger entry", async () => {
    const effects: string[] = [];
    const { chargeCard, lookupOrder } = supportTools(effects);
    const app = supportAgent({
      model: [
        callsTurn("m-1", [
          ["charge_card", '{"order_id": "4821", amount_cents: 42'],
          ["charge_card", { order_id: "4821", amount_cents: 42.5 }],
          ["lookup_order", { order_id: 4821 }],
          ["lookup_order", { order_id: "4821" }],
        ]),
        "Let me fix those arguments.",
      ],
      tools: [chargeCard, lookupOrder],
      logger: recordingLogger(),
    });

    const result = await app.invoke(user("charge"), { threadId: "t-args" });

    expect(effects).toEqual(["lookup 4821"]);
    expect(toolText(result.state, "call_1")).toMatch(
      /^Tool 'charge_card' failed: \[TOOL_ARGS_001\] arguments are not valid JSON \(.+\)$/,
    );
    expect(toolText(result.state, "call_2")).toMatch(
      /^Tool 'charge_card' failed: \[TOOL_ARGS_001\] arguments do not match the schema: amount_cents: /,
    );
    expect(toolText(result.state, "call_3")).toMatch(
      /^Tool 'lookup_order' failed: \[TOOL_ARGS_001\] arguments do not match the schema: order_id: /,
    );
    expect(toolMessages(result.state).map((m) => m.isError === true)).toEqual([
      true,
      true,
      true,
      false,
    ]);
    const ledger = await app.getToolLedger({ threadId: "t-args" });
    expect(ledger.map((e) => e.key)).toEqual(["m-1:call_4"]);
  });

  it("treats empty arguments as {} and validates them", async () => {
    const seen: unknown[] = [];
    const ping = tool({
      name: "ping",
      description: "Ping.",
      schema: z.object({}),
      execute: (args) => {
        seen.push(args);
        return "pong";
      },
    });
    const app = supportAgent({ model: [callsTurn("m-1", [["ping", ""]]), "ok"], tools: [ping] });
    const result = await app.invoke(user("ping"), { threadId: "t-empty" });
    expect(seen).toEqual([{}]);
    expect(toolText(result.state, "call_1")).toBe("pong");
  });

  it("answers an unknown tool with TOOL_NOT_FOUND_001 listing the tools, and counts it", async () => {
    const effects: string[] = [];
    const { chargeCard, lookupOrder } = supportTools(effects);
    const metrics = testMeter();
    const logger = recordingLogger();
    const app = supportAgent({
      model: [callsTurn("m-1", [["refund_payment", { order_id: "4821" }]]), "Sorry."],
      tools: [chargeCard, lookupOrder],
      meter: metrics.meter,
      logger,
    });

    const result = await app.invoke(user("refund"), { threadId: "t-404" });

    expect(result.status).toBe("completed");
    expect(effects).toEqual([]);
    const [message] = toolMessages(result.state);
    expect(message).toMatchObject({ toolCallId: "call_1", isError: true });
    expect(Message.text(message!)).toBe(
      "Tool 'refund_payment' failed: [TOOL_NOT_FOUND_001] no tool named 'refund_payment' (tools: charge_card, lookup_order)",
    );
    expect(await app.getToolLedger({ threadId: "t-404" })).toEqual([]);
    expect(await metrics.sum("tenxgraph.tool.errors", { tool: "refund_payment" })).toBe(1);
    expect(logger.find("warn", "[TOOL_NOT_FOUND_001]")[0]?.fields.toolCallId).toBe("call_1");
  });

  it("keeps a TOOL_ code of a ToolError the tool throws", async () => {
    const picky = tool({
      name: "picky",
      description: "Refuses.",
      schema: z.object({}),
      execute: () => {
        throw new ToolError("TOOL_ARGS_001", "picky", "order 4821 is already refunded");
      },
    });
    const app = supportAgent({ model: [callsTurn("m-1", [["picky", {}]]), "ok"], tools: [picky] });
    const result = await app.invoke(user("go"), { threadId: "t-code" });
    expect(toolText(result.state, "call_1")).toBe(
      "Tool 'picky' failed: [TOOL_ARGS_001] order 4821 is already refunded",
    );
  });
});

describe("ToolNode: results and context", () => {
  it("gives the tool its context: key, ids, attempt, run, user, signal and state", async () => {
    const contexts: ToolContext[] = [];
    const lastMessageIds: (string | undefined)[] = [];
    const inspect = tool({
      name: "inspect",
      description: "Looks at its context.",
      schema: z.object({}),
      execute: (_args, ctx) => {
        contexts.push(ctx);
        lastMessageIds.push(ctx.state.messages.at(-1)?.id);
        expect(ctx.signal.aborted).toBe(false);
        return "seen";
      },
    });
    const app = supportAgent({
      model: [callsTurn("m-ctx", [["inspect", {}, "call_9"]]), "done"],
      tools: [inspect],
    });

    const result = await app.invoke(user("look"), { threadId: "t-ctx", userId: "customer-118" });

    expect(contexts).toHaveLength(1);
    const ctx = contexts[0]!;
    expect(ctx).toMatchObject({
      idempotencyKey: "m-ctx:call_9",
      threadId: "t-ctx",
      messageId: "m-ctx",
      toolCallId: "call_9",
      attempt: 1,
      runId: result.runId,
      userId: "customer-118",
    });
    expect(ctx.signal).toBeInstanceOf(AbortSignal);
    expect(lastMessageIds).toEqual(["m-ctx"]);
    expect(typeof ctx.logger.info).toBe("function");
  });

  it("runs a call without an id outside the ledger, with a warning and a one-off key", async () => {
    const contexts: ToolContext[] = [];
    const logger = recordingLogger();
    const inspect = tool({
      name: "inspect",
      description: "Looks at its context.",
      schema: z.object({}),
      execute: (_args, ctx) => {
        contexts.push(ctx);
        return "seen";
      },
    });
    const app = supportAgent({
      model: [callsTurn("m-1", [["inspect", {}, ""]]), "ok"],
      tools: [inspect],
      logger,
    });
    await app.invoke(user("go"), { threadId: "t-nokey" });

    expect(contexts).toHaveLength(1);
    expect(contexts[0]?.attempt).toBe(0);
    expect(contexts[0]?.idempotencyKey).toMatch(/^t-nokey:.+/);
    expect(await app.getToolLedger({ threadId: "t-nokey" })).toEqual([]);
    expect(logger.find("warn", "the ledger is skipped and it runs at least once")).toHaveLength(1);
  });

  // A message without an id never gets this far: nodes' messages are validated (see below).
  it.each([["a call without an id", "m-1", ""]])(
    "gives %s the same idempotency key when its node runs again",
    async (_label, messageId, callId) => {
      const contexts: ToolContext[] = [];
      const inspect = tool({
        name: "inspect",
        description: "Looks at its context.",
        schema: z.object({}),
        execute: (_args, ctx) => {
          contexts.push(ctx);
          return "seen";
        },
      });
      const crash = new FaultPoints().arm(
        "tool.after_return",
        () => {
          throw new Error("crashed after the tool returned");
        },
        { times: 1 },
      );
      // Built by hand: Message.assistant() would give the message an id.
      const unkeyed = () => ({
        ...Message.assistant("", [{ id: callId, name: "inspect", arguments: "{}" }]),
        id: messageId,
      });
      const app = supportAgent({ model: [unkeyed, "ok"], tools: [inspect], faultPoints: crash });
      await expect(app.invoke(user("go"), { threadId: "t-unkeyed" })).rejects.toThrow(
        "crashed after the tool returned",
      );

      const result = await app.invoke(null, { threadId: "t-unkeyed" });

      expect(result.status).toBe("completed");
      expect(contexts.map((c) => c.attempt)).toEqual([0, 0]);
      expect(contexts[0]?.idempotencyKey).toMatch(/^t-unkeyed:.+/);
      expect(contexts[1]?.idempotencyKey).toBe(contexts[0]?.idempotencyKey);
      expect(await app.getToolLedger({ threadId: "t-unkeyed" })).toEqual([]);
    },
  );

  it("refuses a model message without an id before it reaches the store", async () => {
    const noId = () => ({
      ...Message.assistant("", [{ id: "call_1", name: "inspect", arguments: "{}" }]),
      id: "",
    });
    const app = supportAgent({ model: [noId], tools: [] });
    await expect(app.invoke(user("go"), { threadId: "t-noid" })).rejects.toThrow(
      /Node 'MAIN' returned an invalid message \[0\] at 'id'/,
    );
    expect((await app.getState({ threadId: "t-noid" }))?.values.messages).toHaveLength(1);
  });

  it("turns outputs into tool messages: text, JSON, nothing, content blocks, a tool message", async () => {
    const outputs: Record<string, unknown> = {
      text: "plain",
      json: { ok: true, n: [1, 2] },
      nothing: undefined,
      blocks: [{ type: "text", text: "block text" }],
      message: Message.tool("ignored-id", "custom body", { isError: true }),
    };
    const echo = tool({
      name: "echo",
      description: "Returns a canned output.",
      schema: z.object({ kind: z.string() }),
      execute: (args) => outputs[args.kind],
    });
    const kinds = Object.keys(outputs);
    const app = supportAgent({
      model: [
        callsTurn(
          "m-1",
          kinds.map((kind) => ["echo", { kind }, kind]),
        ),
        "ok",
      ],
      tools: [echo],
    });

    const result = await app.invoke(user("echo"), { threadId: "t-out" });

    const byCall = new Map(toolMessages(result.state).map((m) => [m.toolCallId, m]));
    expect(byCall.get("text")?.content).toBe("plain");
    expect(byCall.get("json")?.content).toBe('{"ok":true,"n":[1,2]}');
    expect(byCall.get("nothing")?.content).toBe("");
    expect(byCall.get("blocks")?.content).toEqual([{ type: "text", text: "block text" }]);
    const custom = byCall.get("message") as ToolMessage;
    expect(custom).toMatchObject({ content: "custom body", isError: true, toolCallId: "message" });
    expect(custom.id).not.toBe((outputs.message as ToolMessage).id);
  });

  it("lets a single call change the state in place", async () => {
    type S = { messages: Message[]; notes: string[]; order: { status: string } };
    const annotate = tool<z.ZodObject<{ note: z.ZodString }>, S>({
      name: "annotate",
      description: "Adds a note.",
      schema: z.object({ note: z.string() }),
      execute: (args, ctx) => {
        ctx.state.notes.push(args.note);
        ctx.state.order.status = "annotated";
        return "noted";
      },
    });
    const app = supportAgent<S>({
      model: [callsTurn("m-1", [["annotate", { note: "VIP customer" }]]), "ok"],
      tools: [annotate],
      state: { initialState: { notes: ["first"], order: { status: "new" } } },
    });

    const result = await app.invoke(user("note it"), { threadId: "t-single" });

    expect(result.state.notes).toEqual(["first", "VIP customer"]);
    expect(result.state.order).toEqual({ status: "annotated" });
    const saved = await app.getState({ threadId: "t-single" });
    expect(saved?.values.notes).toEqual(["first", "VIP customer"]);
  });

  it("re-applies a single call's state changes when it is replayed from the ledger", async () => {
    type S = { messages: Message[]; notes: string[] };
    const effects: string[] = [];
    const annotate = tool<z.ZodObject<{ note: z.ZodString }>, S>({
      name: "annotate",
      description: "Adds a note.",
      schema: z.object({ note: z.string() }),
      execute: (args, ctx) => {
        effects.push(args.note);
        ctx.state.notes = [...ctx.state.notes, args.note];
        return "noted";
      },
    });
    const crash = new FaultPoints().arm(
      "ledger.after_record",
      () => {
        throw new Error("crashed after the record");
      },
      { times: 1 },
    );
    const app = supportAgent<S>({
      model: [callsTurn("m-1", [["annotate", { note: "VIP" }]]), "ok"],
      tools: [annotate],
      state: { initialState: { notes: [] } },
      faultPoints: crash,
      // Ledger v1: a record before the step write (v2 records a lone call with the step write).
      checkpointer: withoutStepWrites(new InMemoryCheckpointer()),
    });
    await expect(app.invoke(user("note"), { threadId: "t-replay-1" })).rejects.toThrow(
      "crashed after the record",
    );
    expect((await app.getState({ threadId: "t-replay-1" }))?.values.notes).toEqual([]);

    const { events } = await collectEvents(app.stream(null, { threadId: "t-replay-1" }));

    expect(effects).toEqual(["VIP"]);
    expect(ofType(events, "tool_result")[0]?.replayed).toBe(true);
    const saved = await app.getState({ threadId: "t-replay-1" });
    expect(saved?.values.notes).toEqual(["VIP"]);
    expect(toolText(saved!.values, "call_1")).toBe("noted");
  });

  it.each([1, 3])(
    "ignores messages a tool pushes into ctx.state.messages (%s calls)",
    async (count) => {
      const note = tool({
        name: "note",
        description: "Pushes into the transcript.",
        schema: z.object({}),
        execute: (_args, ctx) => {
          ctx.state.messages.push(Message.system("pushed by a tool"));
          return "noted";
        },
      });
      const calls = Array.from({ length: count }, () => ["note", {}] as const);
      const app = supportAgent({ model: [callsTurn("m-1", calls), "ok"], tools: [note] });

      const result = await app.invoke(user("go"), { threadId: "t-push" });

      const roles = ["user", "assistant", ...calls.map(() => "tool"), "assistant"];
      expect(result.state.messages.map((m) => m.role)).toEqual(roles);
      const saved = await app.getState({ threadId: "t-push" });
      expect(saved?.values.messages.map((m) => m.role)).toEqual(roles);
    },
  );

  it("streams tool_start before tool_result for every call, with keys and error flags", async () => {
    const effects: string[] = [];
    const { lookupOrder, chargeCard } = supportTools(effects);
    const app = supportAgent({
      model: [
        callsTurn("m-1", [
          ["lookup_order", { order_id: "1" }],
          ["nope", {}],
        ]),
        "ok",
      ],
      tools: [lookupOrder, chargeCard],
    });

    const { events } = await collectEvents(app.stream(user("go"), { threadId: "t-events" }));

    const toolEvents = events.filter((e) => e.type === "tool_start" || e.type === "tool_result");
    expect(ofType(toolEvents, "tool_start")).toEqual([
      {
        type: "tool_start",
        node: "TOOL",
        key: "m-1:call_1",
        toolCallId: "call_1",
        toolName: "lookup_order",
      },
      // A call refused before it runs has no ledger key, but the same two events.
      { type: "tool_start", node: "TOOL", key: null, toolCallId: "call_2", toolName: "nope" },
    ]);
    const results = ofType(events, "tool_result");
    expect(results.map((r) => [r.toolCallId, r.key, r.replayed, r.isError])).toEqual([
      ["call_2", null, false, true],
      ["call_1", "m-1:call_1", false, false],
    ]);
    for (const id of ["call_1", "call_2"]) {
      const kinds = toolEvents.filter((e) => e.toolCallId === id).map((e) => e.type);
      expect(kinds).toEqual(["tool_start", "tool_result"]);
    }
    const streamed = ofType(events, "message").map((e) => e.message);
    expect(streamed.some((m) => m.role === "tool" && m.toolCallId === "call_2" && m.isError)).toBe(
      true,
    );
    expect(ofType(events, "run_end")[0]?.status).toBe("completed");
  });
});

describe("ToolNode: timeouts", () => {
  it("settles a tool that ignores its signal at its timeout; its late result changes nothing", async () => {
    const hang = deferred();
    const returned = deferred<boolean>();
    const zombie = tool({
      name: "slow_lookup",
      description: "Hangs past its deadline.",
      schema: z.object({}),
      timeout: 0.05,
      execute: async (_args, ctx) => {
        await hang.promise; // ignores ctx.signal
        returned.resolve(ctx.signal.aborted);
        return "late result";
      },
    });
    const metrics = testMeter();
    const app = supportAgent({
      model: [callsTurn("m-1", [["slow_lookup", {}]]), "It timed out."],
      tools: [zombie],
      meter: metrics.meter,
    });

    const result = await app.invoke(user("go"), { threadId: "t-zombie" });

    expect(result.status).toBe("completed");
    expect(toolText(result.state, "call_1")).toBe(
      "Tool 'slow_lookup' failed: [NODE_TIMEOUT_002] Tool 'slow_lookup' timed out after 0.05 s",
    );
    expect(Message.text(result.state.messages.at(-1)!)).toBe("It timed out.");
    expect(await metrics.sum("tenxgraph.tool.timeouts", { tool: "slow_lookup" })).toBe(1);
    const ledger = await app.getToolLedger({ threadId: "t-zombie" });
    expect(ledger).toHaveLength(1);
    const entry = ledger[0] as CompletedLedgerEntry;
    expect(entry).toMatchObject({ status: "completed", attempt: 1 });
    expect(JSON.stringify(entry.result)).toContain("[NODE_TIMEOUT_002]");
    const stateBefore = await app.getState({ threadId: "t-zombie" });

    hang.resolve(); // the zombie finally returns, long after the run ended
    expect(await returned.promise).toBe(true);
    await pause(20);

    expect(await app.getToolLedger({ threadId: "t-zombie" })).toEqual(ledger);
    expect(await app.getState({ threadId: "t-zombie" })).toEqual(stateBefore);
    expect(JSON.stringify(stateBefore)).not.toContain("late result");
  });

  it("a tool that timed out and writes the state later changes nothing the run keeps", async () => {
    type S = BaseState & { flag?: string };
    const gate = deferred();
    const wrote = deferred();
    const lateWriter = tool<z.ZodObject<Record<string, never>>, S>({
      name: "late_writer",
      description: "Writes the state after its deadline.",
      schema: z.object({}),
      timeout: 0.05,
      execute: async (_args, ctx) => {
        await gate.promise; // ignores ctx.signal
        ctx.state.flag = "written by a timed-out tool";
        wrote.resolve();
        return "late";
      },
    });
    const app = new StateGraph<S>()
      .addNode("MAIN", callsTurn("m-1", [["late_writer", {}]]))
      .addNode("TOOL", new ToolNode<S>([lateWriter]))
      .addNode("NEXT", async (_state, ctx) => {
        gate.resolve(); // the zombie tool writes while this node runs
        await wrote.promise;
        return untilAborted(ctx.signal);
      })
      .addEdge("MAIN", "TOOL")
      .addEdge("TOOL", "NEXT")
      .addEdge("NEXT", END)
      .setEntryPoint("MAIN")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger: recordingLogger() });

    const run = app.invoke(user("go"), { threadId: "t-late-write" });
    await wrote.promise;
    await app.stop({ threadId: "t-late-write" }); // writes the run's state as it stands
    const result = await run;

    expect(result.status).toBe("stopped");
    expect(result.state).not.toHaveProperty("flag");
    const saved = await app.getState({ threadId: "t-late-write" });
    expect(saved?.values).not.toHaveProperty("flag");
    expect(toolText(saved!.values, "call_1")).toBe(
      "Tool 'late_writer' failed: [NODE_TIMEOUT_002] Tool 'late_writer' timed out after 0.05 s",
    );
  });

  it("uses the run's toolTimeout unless the tool sets its own (null disables it)", async () => {
    const make = (name: string, timeout?: number | null) =>
      tool({
        name,
        description: "Sleeps 80 ms.",
        schema: z.object({}),
        ...(timeout === undefined ? {} : { timeout }),
        execute: async () => {
          await pause(80);
          return `${name} done`;
        },
      });
    const app = supportAgent({
      model: [
        callsTurn("m-1", [
          ["default_timeout", {}],
          ["no_timeout", {}],
          ["long_timeout", {}],
        ]),
        "ok",
      ],
      tools: [make("default_timeout"), make("no_timeout", null), make("long_timeout", 5)],
      logger: recordingLogger(),
    });

    const result = await app.invoke(user("go"), { threadId: "t-timeouts", toolTimeout: 0.02 });

    expect(toolText(result.state, "call_1")).toMatch(/\[NODE_TIMEOUT_002\] .* after 0.02 s$/);
    expect(toolText(result.state, "call_2")).toBe("no_timeout done");
    expect(toolText(result.state, "call_3")).toBe("long_timeout done");
  });
});

describe("ToolNode construction and misuse", () => {
  it("refuses two tools with one name and lists its tools", () => {
    const effects: string[] = [];
    const { chargeCard, lookupOrder } = supportTools(effects);
    expect(() => new ToolNode([chargeCard, lookupOrder, chargeCard])).toThrow(
      new TypeError("ToolNode: two tools are named 'charge_card'"),
    );
    expect(new ToolNode([chargeCard, lookupOrder]).tools.map((t) => t.name)).toEqual([
      "charge_card",
      "lookup_order",
    ]);
  });

  it("warns and changes nothing when the last message has no tool calls", async () => {
    const logger = recordingLogger();
    const app = new StateGraph()
      .addNode("TOOL", new ToolNode([]))
      .addEdge("TOOL", END)
      .setEntryPoint("TOOL")
      .compile({ logger, checkpointer: new InMemoryCheckpointer() });

    const result = await app.invoke(user("hello"), { threadId: "t-idle" });

    expect(result.status).toBe("completed");
    expect(result.state.messages.map((m) => m.role)).toEqual(["user"]);
    expect(logger.find("warn", "ToolNode ran but the last message has no tool calls")).toHaveLength(
      1,
    );
  });
});
