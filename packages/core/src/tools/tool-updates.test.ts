import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { applyUpdate, type BaseState, type Reducer } from "../definition/reducers.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import {
  callsTurn,
  collectEvents,
  deferred,
  ofType,
  recordingLogger,
  supportAgent,
  toolText,
  withoutStepWrites,
} from "../support/helpers.js";
import { tool } from "./tool.js";

const sum: Reducer<number> = (current, update) => current + update;
const concat: Reducer<unknown[]> = (current, update) => [...current, ...update];
const merge: Reducer<Record<string, unknown>> = (current, update) => ({ ...current, ...update });
const union: Reducer<string[]> = (current, update) => [...new Set([...current, ...update])];

type S = BaseState & Record<string, unknown>;

/**
 * A tool that makes, in order, the updates `perCall[args.i]`. Earlier calls return later, so
 * the order calls finish in is the reverse of call order.
 */
function updater(perCall: readonly Record<string, unknown>[][], effects: number[] = []) {
  return tool<z.ZodObject<{ i: z.ZodNumber }>, S>({
    name: "update_state",
    description: "Updates the state.",
    schema: z.object({ i: z.number() }),
    execute: async ({ i }, ctx) => {
      effects.push(i);
      for (let turn = 0; turn < perCall.length - i; turn++) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      for (const update of perCall[i]!) ctx.update(update);
      return `updated ${i}`;
    },
  });
}

function calls(count: number): [string, { i: number }][] {
  return Array.from({ length: count }, (_, i) => ["update_state", { i }]);
}

describe("ctx.update in parallel tool calls", () => {
  const cases = [
    { reducer: "sum", reducers: { n: sum }, initial: 100, update: 1, expected: 103 },
    {
      reducer: "concat",
      reducers: { n: concat },
      initial: ["start"],
      update: ["x"],
      expected: ["start", "x", "x", "x"],
    },
    {
      reducer: "object merge",
      reducers: { n: merge },
      initial: { a: 0, keep: true },
      perCall: [{ a: 1 }, { b: 2 }, { a: 3 }],
      expected: { a: 3, b: 2, keep: true },
    },
    {
      reducer: "set union",
      reducers: { n: union },
      initial: ["vip"],
      perCall: [["refund"], ["vip", "late"], ["refund", "fraud"]],
      expected: ["vip", "refund", "late", "fraud"],
    },
  ];

  it.each(cases)(
    "applies 3 calls' updates through a $reducer reducer, in call order",
    async (c) => {
      const values = c.perCall ?? [c.update, c.update, c.update];
      const perCall = values.map((value) => [{ n: value }]);
      const logger = recordingLogger();
      const app = supportAgent<S>({
        model: [callsTurn("m-1", calls(3)), "ok"],
        tools: [updater(perCall)],
        state: { initialState: { n: c.initial }, reducers: c.reducers as never },
        logger,
      });

      const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t-red" });

      expect(result.state.n).toEqual(c.expected);
      expect((await app.getState({ threadId: "t-red" }))?.values.n).toEqual(c.expected);
      expect(logger.records.filter((r) => r.level === "warn")).toEqual([]);
    },
  );

  it("applies a single call's several updates through the same path, in the order it made them", async () => {
    const app = supportAgent<S>({
      model: [callsTurn("m-1", calls(1)), "ok"],
      tools: [updater([[{ n: 5, log: ["a"] }, { n: 2, log: ["b"] }, { status: "done" }]])],
      state: {
        initialState: { n: 100, log: [], status: "new" },
        reducers: { n: sum, log: concat } as never,
      },
    });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t-one" });

    expect([result.state.n, result.state.log, result.state.status]).toEqual([
      107,
      ["a", "b"],
      "done",
    ]);
  });

  it("drops the updates of a call that failed, and applies its siblings'", async () => {
    const flaky = tool<z.ZodObject<{ fail: z.ZodBoolean }>, S>({
      name: "add_one",
      description: "Adds one, maybe fails after.",
      schema: z.object({ fail: z.boolean() }),
      execute: ({ fail }, ctx) => {
        ctx.update({ n: 1 });
        if (fail) throw new Error("card declined");
        return "added";
      },
    });
    const app = supportAgent<S>({
      model: [
        callsTurn("m-1", [
          ["add_one", { fail: false }],
          ["add_one", { fail: true }],
          ["add_one", { fail: false }],
        ]),
        "ok",
      ],
      tools: [flaky],
      state: { initialState: { n: 100 }, reducers: { n: sum } as never },
    });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t-fail" });

    expect(result.state.n).toBe(102);
    expect(toolText(result.state, "call_2")).toContain("card declined");
  });

  it("refuses an update of messages, or of a value a store cannot keep, failing the call", async () => {
    const bad = tool<z.ZodObject<{ what: z.ZodString }>, S>({
      name: "bad_update",
      description: "Updates what it should not.",
      schema: z.object({ what: z.string() }),
      execute: ({ what }, ctx) => {
        if (what === "messages") ctx.update({ messages: [] } as never);
        else ctx.update({ n: 10n });
        return "updated";
      },
    });
    const app = supportAgent<S>({
      model: [
        callsTurn("m-1", [
          ["bad_update", { what: "messages" }],
          ["bad_update", { what: "bigint" }],
        ]),
        "ok",
      ],
      tools: [bad],
      state: { initialState: { n: 1 }, reducers: { n: sum } as never },
    });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t-bad" });

    expect(toolText(result.state, "call_1")).toContain("cannot update 'messages'");
    expect(toolText(result.state, "call_2")).toContain("update.n: BigInt is not JSON");
    expect(result.state.n).toBe(1);
  });

  it("drops, with a warning, an update made after the call settled", async () => {
    const logger = recordingLogger();
    const late = deferred();
    const lingering = tool<z.ZodObject<Record<string, never>>, S>({
      name: "lingering",
      description: "Updates after it returned.",
      schema: z.object({}),
      execute: (_args, ctx) => {
        ctx.update({ n: 1 });
        setTimeout(() => {
          ctx.update({ n: 1000 });
          late.resolve();
        }, 5);
        return "returned";
      },
    });
    const app = supportAgent<S>({
      model: [callsTurn("m-1", [["lingering", {}]]), "ok"],
      tools: [lingering],
      state: { initialState: { n: 100 }, reducers: { n: sum } as never },
      logger,
    });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t-late" });
    await late.promise;

    expect(result.state.n).toBe(101);
    expect((await app.getState({ threadId: "t-late" }))?.values.n).toBe(101);
    expect(
      logger.find("warn", "ctx.update after tool 'lingering' settled was dropped"),
    ).toHaveLength(1);
  });

  it("keeps the last direct write of a reducer field in call order, and warns to use ctx.update", async () => {
    const logger = recordingLogger();
    const setter = tool<z.ZodObject<{ tag: z.ZodString }>, S>({
      name: "tag",
      description: "Tags by assigning the whole list.",
      schema: z.object({ tag: z.string() }),
      execute: ({ tag }, ctx) => {
        ctx.state.tags = [...(ctx.state.tags as string[]), tag];
        return "tagged";
      },
    });
    const app = supportAgent<S>({
      model: [
        callsTurn("m-1", [
          ["tag", { tag: "vip" }],
          ["tag", { tag: "refund" }],
        ]),
        "ok",
      ],
      tools: [setter],
      state: { initialState: { tags: ["new"] }, reducers: { tags: concat } as never },
      logger,
    });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t-direct" });

    // No longer folded through concat (which gave ["new", "new", "vip", "new", "refund"]).
    expect(result.state.tags).toEqual(["new", "refund"]);
    const [warning] = logger.find("warn", "state field 'tags'");
    expect(warning?.fields).toMatchObject({ field: "tags", toolCallIds: ["call_1", "call_2"] });
    expect(warning?.message).toContain("write it with ctx.update(...)");
  });
});

describe("ctx.update and the ledger", () => {
  it("records a call's updates with its result and re-applies them exactly once on replay", async () => {
    // Ledger v1: each result recorded as its tool returns; a fault after one record fails the
    // node after every sibling settled and was recorded, before the node's step is written.
    const checkpointer = withoutStepWrites(new InMemoryCheckpointer());
    const effects: number[] = [];
    const perCall = [[{ n: 1 }], [{ n: 1 }, { n: 10 }], [{ n: 1 }]];
    const crash = new FaultPoints().arm(
      "ledger.after_record",
      () => {
        throw new Error("crashed after the record");
      },
      { times: 1 },
    );
    const options = {
      model: [callsTurn("m-1", calls(3)), "ok"],
      tools: [updater(perCall, effects)],
      state: { initialState: { n: 100 }, reducers: { n: sum } as never },
      checkpointer,
    };
    const first = supportAgent<S>({ ...options, faultPoints: crash });
    await expect(
      first.invoke({ messages: [Message.user("go")] }, { threadId: "t-rep" }),
    ).rejects.toThrow("crashed after the record");
    expect((await first.getState({ threadId: "t-rep" }))?.values.n).toBe(100);
    const ledger = await first.getToolLedger({ threadId: "t-rep" });
    expect(ledger.map((e) => e.status)).toEqual(["completed", "completed", "completed"]);
    expect(ledger.map((e) => ("result" in e ? e.result : null))).toMatchObject(
      perCall.map((updates) => ({ updates })),
    );

    const second = supportAgent<S>(options);
    const { events } = await collectEvents(second.stream(null, { threadId: "t-rep" }));

    expect([...effects].sort()).toEqual([0, 1, 2]);
    expect(ofType(events, "tool_result").map((e) => e.replayed)).toEqual([true, true, true]);
    expect((await second.getState({ threadId: "t-rep" }))?.values.n).toBe(113);
  });
});

describe("ctx.update (property)", () => {
  const KINDS = {
    sum: { reducer: sum as Reducer<unknown>, initial: 0, value: fc.integer({ min: -5, max: 5 }) },
    concat: {
      reducer: concat as Reducer<unknown>,
      initial: [] as unknown[],
      value: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 2 }),
    },
    merge: {
      reducer: merge as Reducer<unknown>,
      initial: {},
      value: fc.dictionary(fc.constantFrom("a", "b", "c"), fc.integer({ min: 0, max: 3 }), {
        maxKeys: 2,
        noNullPrototype: true,
      }),
    },
    union: {
      reducer: union as Reducer<unknown>,
      initial: [] as string[],
      value: fc.array(fc.constantFrom("x", "y", "z"), { maxLength: 2 }),
    },
  } as const;
  type Kind = keyof typeof KINDS;
  const FIELDS = ["f0", "f1", "f2", "f3"] as const;

  const caseArb = fc
    .tuple(...FIELDS.map(() => fc.constantFrom(...(Object.keys(KINDS) as Kind[]))))
    .chain((kinds) => {
      const updateArb = fc.record(
        Object.fromEntries(FIELDS.map((f, i) => [f, KINDS[kinds[i]!].value])),
        { requiredKeys: [], noNullPrototype: true },
      );
      const perCallArb = fc.array(fc.array(updateArb, { maxLength: 3 }), {
        minLength: 1,
        maxLength: 4,
      });
      return fc.tuple(fc.constant(kinds), perCallArb);
    });

  it("ends a parallel tool node where the same updates folded one after another with applyUpdate end", async () => {
    let thread = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async ([kinds, perCall]) => {
        const reducers = Object.fromEntries(FIELDS.map((f, i) => [f, KINDS[kinds[i]!].reducer]));
        const initialState = Object.fromEntries(
          FIELDS.map((f, i) => [f, structuredClone(KINDS[kinds[i]!].initial)]),
        );
        const app = supportAgent<S>({
          model: [callsTurn("m-1", calls(perCall.length)), "ok"],
          tools: [updater(perCall as Record<string, unknown>[][])],
          state: { initialState, reducers: reducers as never },
        });
        const threadId = `t-prop-${thread++}`;

        const result = await app.invoke({ messages: [Message.user("go")] }, { threadId });

        const expected = { ...structuredClone(initialState), messages: [] } as S;
        for (const updates of perCall) {
          for (const update of updates) applyUpdate(expected, structuredClone(update), reducers);
        }
        for (const field of FIELDS) expect(result.state[field]).toEqual(expected[field]);
      }),
      { numRuns: 60 },
    );
  });
});
