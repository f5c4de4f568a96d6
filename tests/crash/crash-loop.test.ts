/**
 * A seeded, randomized crash loop in real processes. Each scenario draws a turn (one or two
 * rounds of parallel calls), onInDoubt policies and an approval step; each worker process
 * draws invoke or stream and may be armed to die (SIGKILL at a fault point, or hung in a tool
 * and killed from outside). Fresh processes continue, resume or resend until the turn
 * completes, and the invariants are checked after every process, however it ended.
 *
 * The loop runs once per store. `TENXGRAPH_CRASH_KILLS=<n>` sets how many kills to reach on each
 * (default 24 on SQLite, 12 on PostgreSQL + Redis to keep CI short: the scenario files already
 * hit every window on both stores); `TENXGRAPH_CRASH_SEED=<s>` the first scenario's seed (a
 * failure prints the one to rerun); `-t SQLite` or `-t PostgreSQL` picks one store.
 */
import { describe, expect, it } from "vitest";
import { STORES, type StoreKind } from "../support/store-spec.js";
import type { AgentParams } from "./support/agent-params.js";
import { CrashScene, type StoredThread, type WorkerRun } from "./support/crash-scene.js";
import { mulberry32, pick, type Rng } from "./support/prng.js";
import {
  KILL_KINDS,
  nextInput,
  planScenario,
  randomKill,
  type KillKind,
  type ScenarioPlan,
} from "./support/random-plan.js";
import { runSeedLanes } from "./support/seed-lanes.js";
import { checkInvariants } from "./support/thread-invariants.js";

const DEFAULT_KILLS: Record<StoreKind, number> = { sqlite: 24, postgres: 12 };
/** A loop this long must reach every way to die, a rerun and a pause; a shorter one may not. */
const KILLS_FOR_COVERAGE = 24;
const DEFAULT_SEED = 1;
const FIRST_SEED = Number(process.env.TENXGRAPH_CRASH_SEED ?? DEFAULT_SEED);
/** Kills armed per scenario at most; after that its processes run unarmed and must finish it. */
const MAX_KILLS_PER_SCENARIO = 3;
/** Far more processes than any scenario needs: beyond it, the thread is not making progress. */
const MAX_PROCESSES_PER_SCENARIO = 14;
const LANES = 2;

/** What the loop reached, to show it really covers every way to die. */
interface Coverage {
  kills: Partial<Record<KillKind, number>>;
  /** Calls that took effect more than once (the in-doubt window under "retry"). */
  reruns: number;
  /** Runs that ended paused (approval or an in-doubt question). */
  pauses: number;
}

describe.each(STORES)("crash loop on $label (real processes, SIGKILL)", ({ kind, label }) => {
  const KILLS = killsOn(kind);
  it(`keeps ledger, transcript and versions consistent across ${KILLS} kills (seed ${FIRST_SEED})`, async () => {
    const coverage: Coverage = { kills: {}, reruns: 0, pauses: 0 };
    await runSeedLanes({ kills: KILLS, firstSeed: FIRST_SEED, lanes: LANES }, (seed, firstKill) =>
      runScenario(kind, label, seed, firstKill, coverage),
    );
    if (KILLS >= KILLS_FOR_COVERAGE) {
      // A loop that never reaches a window proves nothing about it.
      for (const way of KILL_KINDS) {
        expect(coverage.kills[way] ?? 0, `kills at ${way} from seed ${FIRST_SEED}`).toBeGreaterThan(
          0,
        );
      }
      expect(coverage.reruns, "calls run again after a kill in the window").toBeGreaterThan(0);
      expect(coverage.pauses, "runs that paused").toBeGreaterThan(0);
    }
  }, 600_000);
});

/** How many kills the loop reaches on `kind`: the environment's count, or the store's default. */
function killsOn(kind: StoreKind): number {
  return Math.max(1, Number(process.env.TENXGRAPH_CRASH_KILLS ?? DEFAULT_KILLS[kind]));
}

/** Runs one scenario on `kind` to completion; returns how many of its processes were killed. */
async function runScenario(
  kind: StoreKind,
  label: string,
  seed: number,
  firstKill: KillKind,
  coverage: Coverage,
): Promise<number> {
  const rng = mulberry32(seed);
  const plan = planScenario(rng, seed);
  const scene = new CrashScene(`loop-${seed}`, kind, plan);
  const trace = [`seed ${seed} on ${label}: ${describePlan(plan)}`];
  let stored: StoredThread | null = null;
  let kills = 0;
  try {
    for (let n = 0; ; n++) {
      expect(n, "processes without completing the turn").toBeLessThan(MAX_PROCESSES_PER_SCENARIO);
      const params = processParams(rng, plan, stored, n === 0 ? firstKill : null, kills);
      const run = await scene.runArmed(params);
      trace.push(`  run ${n}: ${describeRun(run)}`);
      if (run.exit.signal === "SIGKILL") {
        kills += 1;
        const kind: KillKind = params.hang ? "hang" : (params.kill?.point ?? "anytime");
        coverage.kills[kind] = (coverage.kills[kind] ?? 0) + 1;
      } else {
        expect(run.exit, `worker exit\n${run.stderr}`).toEqual({ code: 0, signal: null });
        expect(
          run.messages.find((m) => m.type === "failed"),
          "the run rejected",
        ).toBeUndefined();
        if (run.done?.status === "interrupted") coverage.pauses += 1;
      }
      const finished = (await scene.read()).checkpoint?.status === "completed";
      stored = await checkInvariants(scene, stored, { finished, label: `seed ${seed}, run ${n}` });
      if (finished) break;
    }
    expect(stored!.ledger, "one ledger entry per call").toHaveLength(plan.rounds.flat().length);
    const keys = stored!.effects.map((e) => e.key);
    coverage.reruns += keys.length - new Set(keys).size;
    return kills;
  } catch (error) {
    if (error instanceof Error) {
      error.message =
        `crash loop failed at seed ${seed} on ${label} (rerun: TENXGRAPH_CRASH_SEED=${seed} ` +
        `TENXGRAPH_CRASH_KILLS=1 npx vitest run tests/crash/crash-loop.test.ts -t ${label.split(" ")[0]})\n` +
        `${trace.join("\n")}\n${error.message}`;
    }
    throw error;
  } finally {
    await scene.dispose();
  }
}

/** The next process: how it starts, invoke or stream, and whether (and where) it dies. */
function processParams(
  rng: Rng,
  plan: ScenarioPlan,
  stored: StoredThread | null,
  forcedKill: KillKind | null,
  killsSoFar: number,
): Partial<AgentParams> & Pick<AgentParams, "via" | "input"> {
  const input = nextInput(rng, stored, `please help (${plan.threadId})`);
  const via = pick(rng, ["invoke", "stream"] as const);
  const armed =
    forcedKill ??
    (killsSoFar < MAX_KILLS_PER_SCENARIO && rng() < 0.7 ? pick(rng, KILL_KINDS) : null);
  const kill = armed ? randomKill(rng, plan, stored, armed) : {};
  return { via, input, policies: plan.policies, approval: plan.approval, metrics: false, ...kill };
}

function describePlan(plan: ScenarioPlan): string {
  const rounds = plan.rounds.map((calls) => calls.map((c) => c.name).join("+")).join(" | ");
  return `${rounds}; policies ${JSON.stringify(plan.policies)}${plan.approval ? "; approval" : ""}`;
}

function describeRun(run: WorkerRun): string {
  const { via, input, kill, hang } = run.params;
  const answer = input.kind === "resume" ? ` ${JSON.stringify(input.answer)}` : "";
  const target = (point: unknown, tool: unknown) =>
    [point, tool].filter((part) => part !== undefined && part !== null).join(" ");
  const armed = hang
    ? `hang ${hang}`
    : kill
      ? `kill at ${target(kill.point, kill.tool)} #${kill.hit ?? 1}`
      : run.params.outsideKillMs !== undefined
        ? `kill ${run.params.outsideKillMs} ms after the first write`
        : "unarmed";
  const failed = run.messages.find((m) => m.type === "failed");
  const how =
    run.exit.signal === "SIGKILL"
      ? `killed${run.killing ? ` at ${target(run.killing.point, run.killing.tool)}` : " from outside"}`
      : `ended ${String(run.done?.status ?? JSON.stringify(failed ?? run.exit))}`;
  return `${via} ${input.kind}${answer}, ${armed} -> ${how}`;
}
