/**
 * The seeded crash loop of composition, in process: a supervisor sends a `Send` per region to a
 * worker subgraph (each a model and a tool node on a child thread of its own), joins their
 * reports and summarizes. Each run may be armed to crash at a random fault point and hit, in the
 * parent or inside a child; a crashed run is continued on a new compiled graph (a "fresh
 * process") until it completes. Then: no recorded call ran twice (a call runs at most once per
 * attempt the ledger granted, and every entry is completed), every branch's report is there
 * exactly once (no lost update, none twice), and every tool call is answered once.
 *
 * `TENXGRAPH_CRASH_SEEDS=<n>` runs seeds 1..n (default 12); `TENXGRAPH_CRASH_SEED=<s>` runs one.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { Send } from "../definition/send.js";
import { StateGraph } from "../graph/state-graph.js";
import { Subgraph } from "../graph/subgraph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { settle } from "../support/helpers.js";
import { FaultPoints } from "../testing/fault-points.js";
import { recordingLogger } from "../testing/recording-logger.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";
import { FAULT_POINTS, type FaultPointName } from "../node/fault-points.js";
import { mulberry32 } from "../support/prng.js";

const DEFAULT_SEEDS = 12;
const THREAD = "team";
const REGIONS = ["eu", "us", "apac"] as const;
const CRASH_POINTS: readonly FaultPointName[] = [
  FAULT_POINTS.TOOL_AFTER_RETURN,
  FAULT_POINTS.LEDGER_AFTER_RECORD,
  FAULT_POINTS.STEP_BEFORE_WRITE,
  FAULT_POINTS.STEP_AFTER_WRITE,
];
const MAX_CRASHES = 4;

interface Team extends BaseState {
  reports: string[];
  region?: string;
}

/** What reached the outside world: each charge by (child thread, ledger key). */
type Effects = Map<string, number>;

/** The team graph, compiled afresh: a new "process" on the same store. */
function team(store: InMemoryCheckpointer, effects: Effects, faultPoints: FaultPoints) {
  const charge = tool({
    name: "charge",
    description: "Charges the region's account",
    schema: z.object({ region: z.string() }),
    execute: ({ region }, ctx) => {
      const effect = `${ctx.threadId} ${ctx.idempotencyKey}`;
      effects.set(effect, (effects.get(effect) ?? 0) + 1);
      return `charged ${region}`;
    },
  });
  const worker = new StateGraph<Team>({ initialState: { reports: [] } })
    .addNode("MODEL", (state) => {
      const last = state.messages.at(-1);
      if (last?.role === "tool") return Message.assistant(`done ${state.region}`);
      const args = JSON.stringify({ region: state.region });
      return Message.assistant("", [{ id: "call_1", name: "charge", arguments: args }]);
    })
    .addNode("TOOLS", new ToolNode<Team>([charge]))
    .addConditionalEdges("MODEL", (s) => (s.messages.at(-1)?.toolCalls ? "TOOLS" : END))
    .addEdge("TOOLS", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ logger: recordingLogger() });
  return new StateGraph<Team>({
    reducers: { reports: (current, update) => [...current, ...update] },
    initialState: { reports: [] },
  })
    .addNode("SUPERVISOR", () => ({}))
    .addNode(
      "WORKER",
      new Subgraph<Team, Team>(worker, {
        input: (state) => ({ region: state.region! }),
        output: (child) => ({ reports: [Message.text(child.messages.at(-1)!)] }),
      }),
    )
    .addNode("SUMMARY", (state) => Message.assistant(state.reports.join(", ")))
    .addConditionalEdges("SUPERVISOR", () =>
      REGIONS.map((region) => new Send("WORKER", { region })),
    )
    .addEdge(["WORKER"], "SUMMARY")
    .addEdge("SUMMARY", END)
    .setEntryPoint("SUPERVISOR")
    .compile({
      checkpointer: store,
      logger: recordingLogger(),
      faultPoints,
      stopPollIntervalMs: 20,
      claimStaleAfterMs: 60,
    });
}

/** Runs one seed; returns the threads its crashes hit (the parent's, or a child's). */
async function runSeed(seed: number): Promise<string[]> {
  const rng = mulberry32(seed);
  const store = new InMemoryCheckpointer();
  const effects: Effects = new Map();
  let input: Partial<Team> | null = { messages: [Message.user(`seed ${seed}`)] };
  const crashedIn: string[] = [];
  for (let crashes = 0; ; crashes++) {
    const faults = new FaultPoints();
    if (crashes < MAX_CRASHES) {
      const point = CRASH_POINTS[Math.floor(rng() * CRASH_POINTS.length)]!;
      const at = 1 + Math.floor(rng() * 8);
      faults.arm(
        point,
        (context) => {
          crashedIn.push(context.threadId);
          throw new Error(`seed ${seed}: crash at ${point} #${at}`);
        },
        { when: () => faults.hits(point) >= at, times: 1 },
      );
    }
    const outcome = await settle(team(store, effects, faults).invoke(input, { threadId: THREAD }));
    input = null;
    if (outcome.ok && outcome.value.status === "completed") break;
    expect(crashes, `seed ${seed}: still not done`).toBeLessThan(MAX_CRASHES + 2);
  }
  await checkInvariants(seed, store, effects);
  return crashedIn;
}

async function checkInvariants(seed: number, store: InMemoryCheckpointer, effects: Effects) {
  const at = `seed ${seed}`;
  const parent = await store.getCheckpoint(THREAD);
  expect(parent?.status, at).toBe("completed");
  // No lost update and none twice: one report per branch, in Send order.
  expect(parent?.values.reports, at).toEqual(REGIONS.map((region) => `done ${region}`));
  const children = await store.listThreads({ parentThreadId: THREAD });
  expect(children.length, at).toBeGreaterThanOrEqual(REGIONS.length);
  for (const { threadId } of children) {
    const entries = await store.listCalls(threadId);
    for (const entry of entries) {
      // A call runs at most once per attempt the ledger granted, and ends recorded.
      const ran = effects.get(`${threadId} ${entry.key}`) ?? 0;
      expect(ran, `${at}: ${threadId} ${entry.key}`).toBeLessThanOrEqual(entry.attempt);
      expect(entry.status, `${at}: ${threadId} ${entry.key}`).toBe("completed");
    }
    const transcript = await store.listMessages(threadId);
    const answers = transcript.filter((m) => m.role === "tool").map((m) => m.toolCallId);
    expect(new Set(answers).size, `${at}: ${threadId} answers each call once`).toBe(answers.length);
  }
  // The effects of the finished children are their ledgers' calls, each at most once per attempt.
  const ranTwice = [...effects].filter(([, n]) => n > 1);
  for (const [effect] of ranTwice) {
    const [threadId, key] = effect.split(" ") as [string, string];
    const [entry] = await store.getCalls(threadId, [key]);
    expect(entry?.attempt ?? 0, `${at}: ${effect} ran twice`).toBeGreaterThan(1);
  }
}

const seeds = process.env.TENXGRAPH_CRASH_SEED
  ? [Number(process.env.TENXGRAPH_CRASH_SEED)]
  : Array.from(
      { length: Number(process.env.TENXGRAPH_CRASH_SEEDS ?? DEFAULT_SEEDS) },
      (_, i) => i + 1,
    );

const crashedIn: string[] = [];

describe("composition crash loop: a supervisor, a Send fan-out to worker subgraphs, random crashes", () => {
  it.each(seeds)(
    "seed %i keeps the ledger, the reports and the transcripts intact",
    async (seed) => {
      crashedIn.push(...(await runSeed(seed)));
    },
    30_000,
  );

  it.runIf(seeds.length >= DEFAULT_SEEDS)(
    "crashed both in the parent and inside the children",
    () => {
      expect(crashedIn.filter((threadId) => threadId === THREAD).length).toBeGreaterThan(0);
      expect(crashedIn.filter((threadId) => threadId !== THREAD).length).toBeGreaterThan(0);
    },
  );
});
