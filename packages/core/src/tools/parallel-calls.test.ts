import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { BaseState, Reducer } from "../definition/reducers.js";
import { Message } from "../messages/message.js";
import { callsTurn, recordingLogger, supportAgent, toolText } from "../support/helpers.js";
import { changedFields, mergeBranches, snapshotFields } from "../definition/branch-merge.js";
import { branchState, TOOL_CALL_WRITERS } from "./parallel-calls.js";
import { tool } from "./tool.js";

const FIELDS = ["a", "b", "c", "d", "e"] as const;
type Fields = Record<string, unknown>;

/** Small value domains, so that branches often write equal values and collide. */
const value = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom("x", "y", ""),
  fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }),
  fc.record({ n: fc.integer({ min: 0, max: 2 }) }, { noNullPrototype: true }),
);
const baselineArb = fc.record(
  Object.fromEntries(FIELDS.map((f) => [f, value])) as Record<
    (typeof FIELDS)[number],
    typeof value
  >,
  { noNullPrototype: true },
);
/** Per branch, the fields it assigns (possibly to the baseline value, i.e. no change). */
const writesArb = fc.array(
  fc.dictionary(fc.constantFrom(...FIELDS), value, {
    maxKeys: FIELDS.length,
    noNullPrototype: true,
  }),
  { minLength: 1, maxLength: 4 },
);

interface Merged {
  state: Fields;
  branches: { id: string; changes: Fields }[];
  warnings: ReturnType<typeof recordingLogger>["records"];
}

/** Runs each branch on its own copy, the way ToolNode does, and merges them back. */
function runBranches(
  baseline: Fields,
  writes: Fields[],
  reducers: Record<string, Reducer<unknown>> = {},
): Merged {
  const logger = recordingLogger();
  const state = { ...structuredClone(baseline), messages: [] } as BaseState;
  const snapshot = snapshotFields(state);
  const branches = writes.map((write, i) => {
    const branch = branchState(state, snapshot) as unknown as Fields;
    Object.assign(branch, structuredClone(write));
    return {
      id: `call_${i + 1}`,
      changes: changedFields(snapshot, branch as unknown as BaseState),
    };
  });
  mergeBranches(state, branches, reducers, logger, TOOL_CALL_WRITERS);
  const { messages: _messages, ...fields } = state as unknown as Fields;
  return { state: fields, branches, warnings: logger.records.filter((r) => r.level === "warn") };
}

/** The branches (in call order) whose write changed `field`. */
function writersOf(baseline: Fields, writes: Fields[], field: string): unknown[] {
  return writes
    .filter((w) => Object.hasOwn(w, field) && !isEqual(w[field], baseline[field]))
    .map((w) => w[field]);
}

function isEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

describe("changedFields (property)", () => {
  it("returns exactly the fields whose value differs from the baseline, never messages", () => {
    fc.assert(
      fc.property(baselineArb, writesArb, (baseline, [write]) => {
        const state = { ...structuredClone(baseline), ...write, messages: [Message.user("x")] };
        const changes = changedFields(baseline, state as BaseState);
        const expected = FIELDS.filter((f) => Object.hasOwn(write!, f))
          .filter((f) => !isEqual(write![f], baseline[f]))
          .sort();
        expect(Object.keys(changes).sort()).toEqual(expected);
        for (const field of expected) expect(changes[field]).toEqual(write![field]);
      }),
    );
  });
});

describe("mergeBranches (property)", () => {
  it("keeps the baseline for every field no branch changed", () => {
    fc.assert(
      fc.property(baselineArb, writesArb, (baseline, writes) => {
        const { state } = runBranches(baseline, writes);
        for (const field of FIELDS) {
          if (writersOf(baseline, writes, field).length === 0) {
            expect(state[field]).toEqual(baseline[field]);
          }
        }
      }),
    );
  });

  it("gives a field changed by exactly one branch that branch's value, without a warning for it", () => {
    fc.assert(
      fc.property(baselineArb, writesArb, (baseline, writes) => {
        const { state, warnings } = runBranches(baseline, writes);
        for (const field of FIELDS) {
          const writers = writersOf(baseline, writes, field);
          if (writers.length !== 1) continue;
          expect(state[field]).toEqual(writers[0]);
          expect(warnings.some((w) => w.fields.field === field)).toBe(false);
        }
      }),
    );
  });

  it("without a reducer, lets the last branch in call order win a conflict and warns naming the writers", () => {
    fc.assert(
      fc.property(baselineArb, writesArb, (baseline, writes) => {
        const { state, warnings } = runBranches(baseline, writes);
        for (const field of FIELDS) {
          const writers = writersOf(baseline, writes, field);
          if (writers.length < 2) continue;
          expect(state[field]).toEqual(writers.at(-1));
          const conflict = !writers.every((w) => isEqual(w, writers[0]));
          const warned = warnings.filter((w) => w.fields.field === field);
          expect(warned).toHaveLength(conflict ? 1 : 0);
          if (conflict) {
            const ids = writes.flatMap((w, i) =>
              Object.hasOwn(w, field) && !isEqual(w[field], baseline[field])
                ? [`call_${i + 1}`]
                : [],
            );
            expect(warned[0]!.fields.toolCallIds).toEqual(ids);
            expect(warned[0]!.message).toContain(`state field '${field}'`);
          }
        }
      }),
    );
  });

  it("with a reducer, keeps the last different whole value in call order too, and warns to use ctx.update", () => {
    // Branches hand back whole values: folding them through a reducer counted the baseline once
    // per writer (issue 17), so a reducer field written directly is treated like any other.
    const text = fc.constantFrom("p", "q", "r", "s");
    const reducer: Reducer<unknown> = (acc, next) => `${String(acc)}>${String(next)}`;
    fc.assert(
      fc.property(
        text,
        fc.array(fc.option(text, { nil: undefined }), { minLength: 2, maxLength: 5 }),
        (base, perBranch) => {
          const writes = perBranch.map((v) => (v === undefined ? {} : { a: v }));
          const { state, warnings } = runBranches({ a: base, b: 0 }, writes, { a: reducer });
          const writers = writersOf({ a: base }, writes, "a") as string[];
          expect(state.a).toBe(writers.at(-1) ?? base);
          expect(state.b).toBe(0);
          const conflict = !writers.every((w) => w === writers[0]);
          expect(warnings).toHaveLength(conflict ? 1 : 0);
          if (conflict) expect(warnings[0]!.message).toContain("write it with ctx.update(...)");
        },
      ),
    );
  });

  it("merges the touched fields the same whatever the untouched fields hold", () => {
    fc.assert(
      fc.property(baselineArb, baselineArb, writesArb, (base1, base2, writes) => {
        const touched = new Set(writes.flatMap((w) => Object.keys(w)));
        // Both baselines agree on the touched fields and differ anywhere else.
        const mixed = Object.fromEntries(
          FIELDS.map((f) => [f, touched.has(f) ? base1[f] : base2[f]]),
        );
        const one = runBranches(base1, writes);
        const two = runBranches(mixed, writes);
        for (const field of FIELDS) {
          if (touched.has(field)) expect(two.state[field]).toEqual(one.state[field]);
          else expect(two.state[field]).toEqual(base2[field]);
        }
        expect(two.warnings.map((w) => w.fields)).toEqual(one.warnings.map((w) => w.fields));
      }),
    );
  });

  it("never shares objects between a branch and the baseline", () => {
    const state = { messages: [Message.user("hi")], order: { items: [1] } } as BaseState & {
      order: { items: number[] };
    };
    const baseline = snapshotFields(state);
    const branch = branchState(state, baseline);
    branch.order.items.push(2);
    expect(baseline).toEqual({ order: { items: [1] } });
    expect(state.order.items).toEqual([1]);
    // The transcript array is the branch's own; its (immutable) messages are shared.
    expect(branch.messages).not.toBe(state.messages);
    expect(branch.messages).toEqual(state.messages);
    branch.messages.push(Message.user("pushed by a tool"));
    expect(state.messages).toHaveLength(1);
  });
});

describe("parallel tool calls on state", () => {
  type S = {
    messages: Message[];
    status: string;
    owner: string;
    tags: string[];
    seen: string[];
  };
  const initialState = { status: "new", owner: "nobody", tags: [] as string[], seen: [] };

  /** A tool that records what it saw of the state and assigns `field = value`. */
  function setter(name: string, field: "status" | "owner" | "tags", value: unknown) {
    return tool<z.ZodObject<Record<string, never>>, S>({
      name,
      description: `Sets ${field}.`,
      schema: z.object({}),
      execute: async (_args, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, name.length)); // interleave
        ctx.state.seen.push(`${name} saw ${ctx.state.status}/${ctx.state.owner}`);
        (ctx.state as Record<string, unknown>)[field] = value;
        return `${name} done`;
      },
    });
  }

  /** A tool that adds `tags` with `ctx.update`, for the graph's reducer to combine. */
  function updater(name: string, tags: string[]) {
    return tool<z.ZodObject<Record<string, never>>, S>({
      name,
      description: "Adds tags.",
      schema: z.object({}),
      execute: async (_args, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, name.length)); // interleave
        ctx.update({ tags });
        return `${name} done`;
      },
    });
  }

  it("lands two parallel tools writing different fields, each working on its own copy", async () => {
    const logger = recordingLogger();
    const app = supportAgent<S>({
      model: [
        callsTurn("m-1", [
          ["set_status", {}],
          ["set_owner_x", {}],
        ]),
        "ok",
      ],
      tools: [setter("set_status", "status", "charged"), setter("set_owner_x", "owner", "ana")],
      state: { initialState },
      logger,
    });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t-two" });

    expect(result.state.status).toBe("charged");
    expect(result.state.owner).toBe("ana");
    // Neither saw the other's write; both appended to `seen` on their own copy: a conflict.
    expect(result.state.seen).toHaveLength(1);
    expect(toolText(result.state, "call_2")).toBe("set_owner_x done");
    const saved = await app.getState({ threadId: "t-two" });
    expect([saved?.values.status, saved?.values.owner]).toEqual(["charged", "ana"]);
    expect(logger.find("warn", "state field 'seen'")[0]?.fields).toMatchObject({
      field: "seen",
      toolCallIds: ["call_1", "call_2"],
    });
    expect(logger.find("warn", "state field 'status'")).toEqual([]);
  });

  it("keeps the last write in call order for a conflicting field, and warns", async () => {
    const logger = recordingLogger();
    const app = supportAgent<S>({
      model: [
        callsTurn("m-1", [
          ["set_owner_slowest", {}],
          ["set_owner_b", {}],
        ]),
        "ok",
      ],
      tools: [
        setter("set_owner_slowest", "owner", "first"),
        setter("set_owner_b", "owner", "second"),
      ],
      state: { initialState },
      logger,
    });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t-clash" });

    expect(result.state.owner).toBe("second");
    const [warning] = logger.find("warn", "state field 'owner'");
    expect(warning?.message).toBe(
      "Parallel tool calls wrote state field 'owner' differently; kept the last in call order (declare a reducer to combine them)",
    );
    expect(warning?.fields.toolCallIds).toEqual(["call_1", "call_2"]);
  });

  it("combines parallel ctx.update writes through the graph's reducer", async () => {
    const logger = recordingLogger();
    const concat = (current: string[], update: string[]) => [...current, ...update];
    const app = supportAgent<S>({
      model: [
        callsTurn("m-1", [
          ["tag_vip", {}],
          ["tag_refund", {}],
        ]),
        "ok",
      ],
      tools: [updater("tag_vip", ["vip"]), updater("tag_refund", ["refund"])],
      state: { initialState, reducers: { tags: concat } },
      logger,
    });

    const result = await app.invoke({ messages: [Message.user("go")] }, { threadId: "t-red" });

    expect(result.state.tags).toEqual(["vip", "refund"]);
    expect(logger.find("warn", "state field 'tags'")).toEqual([]);
  });
});
