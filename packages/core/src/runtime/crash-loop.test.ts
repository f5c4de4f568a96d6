/**
 * A seeded, randomized crash loop, in process: a "crash" is a fault point that throws, and a
 * "fresh process" is a new compiled graph on the same store, so nothing a graph remembers about
 * its own ended runs helps the next one. Each seed drives the support agent through several user
 * turns on one thread; every run may be armed to crash at a random fault point and hit, and a
 * crashed turn is continued on a new graph (possibly crashing again) until it completes. After
 * every run the invariants of the ledger, the transcript and the versioned writes are checked.
 *
 * `TENXGRAPH_CRASH_SEEDS=<n>` runs seeds 1..n (default 30); `TENXGRAPH_CRASH_SEED=<s>` runs one.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decodeEnvelope } from "../ledger/envelope.js";
import { ledgerKey } from "../ledger/ledger-key.js";
import { Message, type UserMessage } from "../messages/message.js";
import { FaultPoints } from "../testing/fault-points.js";
import type { ScriptedTurn } from "../testing/scripted-model.js";
import { RecordingCheckpointer, settle, supportAgent } from "../support/helpers.js";
import { recordingLogger } from "../testing/recording-logger.js";
import { tool, type AnyTool } from "../tools/tool.js";
import { FAULT_POINTS, type FaultPointName } from "../node/fault-points.js";
import { mulberry32 } from "../support/prng.js";

const DEFAULT_SEEDS = 30;
const THREAD = "crash-loop";
const CRASH_POINTS: readonly FaultPointName[] = [
  FAULT_POINTS.TOOL_AFTER_RETURN,
  FAULT_POINTS.LEDGER_AFTER_RECORD,
  FAULT_POINTS.STEP_BEFORE_WRITE,
  FAULT_POINTS.STEP_AFTER_WRITE,
];
/** Crashes armed per turn at most; after that the turn runs without faults and must complete. */
const MAX_CRASHES_PER_TURN = 3;

type Rng = () => number;
const between = (rng: Rng, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;

type ToolName = "lookup_order" | "charge_card" | "send_receipt";

interface TurnPlan {
  user: UserMessage;
  /** Tool-call rounds before the answer: each is one assistant message with 1-3 parallel calls. */
  rounds: { name: ToolName; args: Record<string, unknown> }[][];
  answer: string;
}

/** Several user turns; most ask for tools (ids `call_1`, `call_2`, ... reused every time). */
function planTurns(rng: Rng, seed: number): TurnPlan[] {
  return Array.from({ length: between(rng, 3, 5) }, (_, t) => {
    const plainText = rng() < 0.25;
    const rounds = Array.from({ length: plainText ? 0 : between(rng, 1, 2) }, (_, r) =>
      Array.from({ length: between(rng, 1, 3) }, (_, c) => {
        const order_id = `${seed}-${t}-${r}-${c}`;
        const name = pick(rng, ["lookup_order", "charge_card", "send_receipt"] as const);
        if (name === "charge_card") {
          return { name, args: { order_id, amount_cents: between(rng, 100, 9999) } };
        }
        if (name === "lookup_order") return { name, args: { order_id, fail: rng() < 0.2 } };
        return { name, args: { order_id } };
      }),
    );
    return {
      user: Message.user(`seed ${seed}, turn ${t}: please help`),
      rounds,
      answer: `seed ${seed}, turn ${t}: all done`,
    };
  });
}

/** The model's replies in order (the scripted model picks one by counting assistant messages). */
function script(turns: readonly TurnPlan[]): ScriptedTurn[] {
  return turns.flatMap((turn): ScriptedTurn[] => [
    ...turn.rounds.map((calls) => ({
      toolCalls: calls.map((c) => ({ name: c.name, args: c.args })),
    })),
    turn.answer,
  ]);
}

/** Thrown by an armed fault point: the simulated death of the process. */
class SimulatedCrash extends Error {
  constructor(readonly point: FaultPointName) {
    super(`simulated crash at ${point}`);
  }
}

/**
 * One crash armed on one graph: at the `hit`-th time the run reaches `point`. When `dies`, every
 * fault point reached afterwards throws too, as a dead process writes nothing more (so no
 * "failed" write, and a sibling call that returns afterwards is not recorded either); otherwise
 * only that one hit throws and the run records its failure on the way out.
 */
interface CrashPlan {
  point: FaultPointName;
  hit: number;
  dies: boolean;
}

function randomCrash(rng: Rng): CrashPlan {
  const point = pick(rng, CRASH_POINTS);
  const toolPoint =
    point === FAULT_POINTS.TOOL_AFTER_RETURN || point === FAULT_POINTS.LEDGER_AFTER_RECORD;
  return { point, hit: between(rng, 1, toolPoint ? 4 : 6), dies: rng() < 0.5 };
}

interface Effect {
  key: string;
  tool: ToolName;
  attempt: number;
}

/** Everything one seed knows and counts, outside the engine. */
class SeedWorld {
  readonly store = new RecordingCheckpointer();
  /** The external system: one entry per side effect, keyed by the call's ledger key. */
  readonly effects: Effect[] = [];
  /** Every graph's log: the runtime reports each in-doubt call there ("IN DOUBT"). */
  readonly logger = recordingLogger();
  readonly trace: string[] = [];
  /** The transcript as last read from the store. */
  persisted: Message[] = [];
  readonly tools: AnyTool[];

  constructor() {
    const effect = (tool: ToolName, ctx: { idempotencyKey: string; attempt: number }) =>
      this.effects.push({ key: ctx.idempotencyKey, tool, attempt: ctx.attempt });
    this.tools = [
      tool({
        name: "lookup_order",
        description: "Look up an order (fails when asked to).",
        schema: z.object({ order_id: z.string(), fail: z.boolean() }),
        execute: (args, ctx) => {
          effect("lookup_order", ctx);
          if (args.fail) throw new Error(`order ${args.order_id} is not in the system`);
          return `order ${args.order_id}: shipped`;
        },
      }),
      tool({
        name: "charge_card",
        description: "Charge the saved card.",
        schema: z.object({ order_id: z.string(), amount_cents: z.number().int() }),
        execute: async (args, ctx) => {
          await Promise.resolve();
          effect("charge_card", ctx);
          return `Charged ${args.amount_cents / 100} USD for ${args.order_id}`;
        },
      }),
      tool({
        name: "send_receipt",
        description: "Email the receipt.",
        schema: z.object({ order_id: z.string() }),
        execute: async (args, ctx) => {
          // Slower than its siblings, so they are recorded on their own while it runs, and
          // the loop reaches the window after such a record (ledger.after_record).
          await new Promise((resolve) => setTimeout(resolve, 2));
          effect("send_receipt", ctx);
          return `Receipt sent for ${args.order_id}`;
        },
      }),
    ];
  }
}

/** Fault points for one fresh graph, armed with `plan` (or nothing). */
function faultsFor(world: SeedWorld, plan: CrashPlan | null, fired: { point?: FaultPointName }) {
  const faults = new FaultPoints();
  if (!plan) return faults;
  let seen = 0;
  for (const point of CRASH_POINTS) {
    faults.arm(
      point,
      (at) => {
        world.trace.push(
          `    ${fired.point ? "(dead) " : ""}threw at ${point} in ${at.node}` +
            (at.key ? ` for ${at.key}` : ""),
        );
        fired.point ??= point;
        throw new SimulatedCrash(point);
      },
      {
        when: () =>
          fired.point !== undefined ? plan.dies : point === plan.point && ++seen === plan.hit,
      },
    );
  }
  return faults;
}

/** Coverage across seeds, to show the loop really reaches every window. */
interface Coverage {
  crashes: Record<string, number>;
  deaths: number;
  reruns: number;
}

async function checkInvariants(world: SeedWorld, turnComplete: boolean): Promise<void> {
  const { store } = world;
  const [ledger, messages, checkpoint] = await Promise.all([
    store.listCalls(THREAD),
    store.listMessages(THREAD),
    store.getCheckpoint(THREAD),
  ]);

  // (1) Side effects. No attempt of a call runs twice, and none runs past the ledger's attempt.
  // A completed call ran its recorded attempt exactly once. Every other attempt that ran (a
  // crash cut it between its tool's return and its record, or took its riding result with the
  // step write) was surfaced in doubt by a later run; only the latest attempt of a call still
  // `started` may be unreported yet, and only while its turn is not complete. A claim handed
  // back (`interrupted`) never started its tool.
  const runsByKey = new Map<string, number[]>();
  for (const e of world.effects) runsByKey.set(e.key, [...(runsByKey.get(e.key) ?? []), e.attempt]);
  const entries = new Map(ledger.map((entry) => [entry.key, entry]));
  for (const key of runsByKey.keys()) {
    expect(entries.has(key), `side effect for ${key} has no ledger entry`).toBe(true);
  }
  const surfaced = new Set(
    world.logger
      .find("warn", "IN DOUBT")
      .map(({ fields }) => `${String(fields.key)}#${String(fields.attempt)}`),
  );
  for (const entry of ledger) {
    const runs = runsByKey.get(entry.key) ?? [];
    expect(new Set(runs).size, `an attempt of ${entry.key} ran twice: ${runs.join(", ")}`).toBe(
      runs.length,
    );
    expect(Math.max(0, ...runs), `attempts of ${entry.key} vs the ledger's`).toBeLessThanOrEqual(
      entry.attempt,
    );
    if (entry.status === "completed") {
      expect(runs.includes(entry.attempt), `recorded attempt of ${entry.key} ran`).toBe(true);
    } else if (entry.status === "interrupted") {
      expect(runs.includes(entry.attempt), `handed-back claim of ${entry.key} ran`).toBe(false);
    } else {
      expect(turnComplete, `${entry.key} still started after the turn completed`).toBe(false);
    }
    for (const attempt of runs) {
      const recorded = entry.status === "completed" && attempt === entry.attempt;
      const pending = entry.status === "started" && attempt === entry.attempt;
      if (recorded || pending) continue;
      expect(
        surfaced.has(`${entry.key}#${attempt}`),
        `attempt ${attempt} of ${entry.key} ran, was not recorded, and was never reported in doubt`,
      ).toBe(true);
    }
  }

  // (2) Transcript: ids unique; each tool message answers a call of the assistant message right
  // before its group; a call followed by a later message is answered exactly once, by the
  // message the ledger recorded for it.
  const ids = messages.map((m) => m.id);
  expect(new Set(ids).size, `duplicate message ids in ${ids.join(", ")}`).toBe(ids.length);
  messages.forEach((message, i) => {
    if (message.role !== "assistant" || !message.toolCalls?.length) return;
    let end = i + 1;
    while (messages[end]?.role === "tool") end += 1;
    const answers = messages.slice(i + 1, end);
    const answered = answers.length > 0 || end < messages.length;
    for (const call of message.toolCalls) {
      const mine = answers.filter((m) => m.role === "tool" && m.toolCallId === call.id);
      expect(mine.length, `answers to ${message.id}:${call.id}`).toBe(answered ? 1 : 0);
      if (mine.length === 0) continue;
      const key = ledgerKey(message.id, call.id)!;
      const entry = entries.get(key);
      expect(entry?.status, `ledger entry of answered call ${key}`).toBe("completed");
      const recorded = entry?.status === "completed" && decodeEnvelope(entry.result, call.id);
      expect(recorded && recorded.message, `transcript answer vs ledger for ${key}`).toEqual(
        mine[0],
      );
    }
    expect(answers.length, `tool messages after ${message.id}`).toBe(
      answered ? message.toolCalls.length : 0,
    );
  });
  messages.forEach((message, i) => {
    if (message.role !== "tool") return;
    let issuer = i - 1;
    while (messages[issuer]?.role === "tool") issuer -= 1;
    const before = messages[issuer];
    const calls = (before?.role === "assistant" && before.toolCalls) || [];
    expect(
      calls.some((c) => c.id === message.toolCallId),
      `tool message ${message.id} answers no call of the message before it`,
    ).toBe(true);
  });

  // (3) Versions only increase, each write builds on the last committed one, and the transcript
  // is exactly the messages the writes appended: a prefix-extension of what was there before.
  let previous = 0;
  for (const write of store.writes) {
    expect(write.expectedVersion, "a committed write did not start from the latest version").toBe(
      previous,
    );
    expect(write.committedVersion, "checkpoint version did not increase").toBeGreaterThan(previous);
    previous = write.committedVersion;
  }
  expect(checkpoint?.version ?? 0, "stored version vs last committed write").toBe(previous);
  expect(checkpoint?.messageCount ?? 0, "stored message count").toBe(messages.length);
  expect(messages.length, "transcript shrank").toBeGreaterThanOrEqual(world.persisted.length);
  expect(messages.slice(0, world.persisted.length), "transcript was rewritten").toEqual(
    world.persisted,
  );
  expect(messages, "transcript vs the messages the writes appended").toEqual(
    store.writes.flatMap((write) => write.newMessages),
  );
  world.persisted = messages;
}

/** Runs one seed to the end; throws (with the seed in the message) when an invariant breaks. */
async function runSeed(seed: number, coverage: Coverage): Promise<void> {
  const rng = mulberry32(seed);
  const turns = planTurns(rng, seed);
  const world = new SeedWorld();
  const replies = script(turns);
  try {
    for (const [t, turn] of turns.entries()) {
      world.trace.push(
        `turn ${t}: ${turn.rounds.map((r) => r.length).join("+") || "text"} call(s)`,
      );
      let crashes = 0;
      for (let run = 0; ; run++) {
        const plan =
          crashes < MAX_CRASHES_PER_TURN && rng() < (run === 0 ? 0.7 : 0.5)
            ? randomCrash(rng)
            : null;
        const fired: { point?: FaultPointName } = {};
        // A fresh process: a new graph (and model) on the same store.
        const app = supportAgent({
          model: replies,
          tools: world.tools,
          checkpointer: world.store,
          faultPoints: faultsFor(world, plan, fired),
          claimStaleAfterMs: 40,
          stopPollIntervalMs: 20,
          logger: world.logger,
        });
        // Continue the turn; a crash before its input was stored loses the input, so the
        // client sends it again (the same message, so the same id).
        const stored = world.persisted.some((m) => m.id === turn.user.id);
        world.trace.push(
          `  run ${run} (${stored ? "continue" : "input"}): ` +
            (plan ? `armed ${plan.point} #${plan.hit}${plan.dies ? " (dies)" : ""}` : "no fault"),
        );
        const outcome = await settle(
          app.invoke(stored ? null : { messages: [turn.user] }, { threadId: THREAD }),
        );
        if (!outcome.ok) {
          if (!(outcome.error instanceof SimulatedCrash)) throw outcome.error;
          expect(fired.point, "the run rejected with a crash that was not armed").toBeDefined();
          crashes += 1;
          coverage.crashes[fired.point!] = (coverage.crashes[fired.point!] ?? 0) + 1;
          if (plan!.dies) coverage.deaths += 1;
        } else {
          expect(fired.point, "a crash fired but the run did not reject").toBeUndefined();
          expect(outcome.value.status).toBe("completed");
        }
        await checkInvariants(world, outcome.ok);
        if (outcome.ok) {
          expect(outcome.value.state.messages, "invoke's transcript vs the store").toEqual(
            world.persisted,
          );
          break;
        }
      }
    }

    // (4) The thread ends completed, with every turn's question and answer exactly once, in order.
    const checkpoint = await world.store.getCheckpoint(THREAD);
    expect(checkpoint?.status).toBe("completed");
    expect(checkpoint?.currentNode).toBeNull();
    const texts = world.persisted.map((m) => `${m.role}: ${Message.text(m)}`);
    let from = 0;
    for (const turn of turns) {
      const asked = world.persisted.findIndex((m) => m.id === turn.user.id);
      expect(asked, `question of "${turn.answer}" missing or out of order`).toBeGreaterThanOrEqual(
        from,
      );
      const answers = texts.filter((text) => text === `assistant: ${turn.answer}`);
      expect(answers, "final answers of the turn").toHaveLength(1);
      const answered = texts.indexOf(`assistant: ${turn.answer}`);
      expect(answered, `answer "${turn.answer}" before its question`).toBeGreaterThan(asked);
      from = answered + 1;
    }
    expect(from, "the transcript ends with the last answer").toBe(world.persisted.length);
    const keys = world.effects.map((e) => e.key);
    coverage.reruns += keys.length - new Set(keys).size;
  } catch (error) {
    if (error instanceof Error) {
      error.message =
        `crash loop failed at seed ${seed} (rerun: TENXGRAPH_CRASH_SEED=${seed})\n` +
        `${world.trace.join("\n")}\n${error.message}`;
    }
    throw error;
  }
}

function seedsToRun(): number[] {
  const one = process.env.TENXGRAPH_CRASH_SEED;
  if (one) return [Number(one)];
  const count = Number(process.env.TENXGRAPH_CRASH_SEEDS ?? DEFAULT_SEEDS);
  return Array.from({ length: Math.max(1, Math.floor(count)) }, (_, i) => i + 1);
}

describe("crash loop (in process)", () => {
  const seeds = seedsToRun();

  it(
    `keeps the ledger, transcript and versions consistent across random crashes (${seeds.length} seeds)`,
    async () => {
      const coverage: Coverage = { crashes: {}, deaths: 0, reruns: 0 };
      for (const seed of seeds) await runSeed(seed, coverage);
      if (seeds.length >= DEFAULT_SEEDS) {
        // The loop must actually reach every window, or it proves nothing.
        for (const point of CRASH_POINTS) {
          expect(coverage.crashes[point] ?? 0, `crashes at ${point}`).toBeGreaterThan(0);
        }
        expect(coverage.deaths, "crashes that killed the process").toBeGreaterThan(0);
        expect(coverage.reruns, "calls run again after a crash cut their record").toBeGreaterThan(
          0,
        );
      }
    },
    Math.max(20_000, seeds.length * 2_000),
  );
});
