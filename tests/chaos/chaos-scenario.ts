import { Message } from "@tenxgraph/core";
import { CrashScene, type StoredThread, type WorkerRun } from "../crash/support/crash-scene.js";
import { between, mulberry32 } from "../crash/support/prng.js";
import type { KillKind } from "../crash/support/random-plan.js";
import { brokenInvariant } from "../crash/support/thread-invariants.js";
import type { StoreServers } from "../support/fresh-store.js";
import type { StoreKind } from "../support/store-spec.js";
import type { WorkerProcess } from "../support/worker-process.js";
import type { AgentParams } from "../crash/support/agent-params.js";
import type { GraphVersion } from "../crash/support/graph-versions.js";
import type { Rng } from "../crash/support/prng.js";
import { runWave, type WaveOutcome } from "./chaos-wave.js";
import { count, type ChaosBreak, type ChaosTally } from "./chaos-tally.js";
import { byPolicy, surfacedInDoubt } from "../crash/support/in-doubt-report.js";
import { workloadOf, type ChaosGraph } from "./chaos-workload.js";
import { disruptionOf, planWave } from "./wave-plan.js";

/** Kills planned per scenario at most; after that its processes run undisturbed and finish it. */
const MAX_KILLS_PER_SCENARIO = 4;
/** Far more waves than any scenario needs: beyond it, the thread is not making progress. */
const MAX_WAVES = 16;
/**
 * One lease for every worker (claims judged by different settings are a known defect, not what
 * this run looks for), long enough that a busy machine does not make live workers look dead.
 */
const CLAIM_STALE_AFTER_MS = 1_000;
/**
 * A worker that neither ends nor dies within this is stuck (a failure). Generous: the run keeps
 * a shared two-core machine busy, and a process started cold there can take many seconds to load.
 */
const WORKER_DEADLINE_MS = 120_000;
/** The latest a process of a wave starts after the first. */
const MAX_STAGGER_MS = 30;
/**
 * Refusals a run may end with when others work the thread at once: superseded by another
 * write, nothing to continue yet, a pause to answer first, an interrupt answered already.
 */
const RACE_REFUSALS = new Set([
  "STORAGE_CONFLICT_001",
  "THREAD_001",
  "THREAD_002",
  "RESUME_002",
  "RESUME_003",
]);

/** What a scenario needs from the run around it. */
export interface ScenarioContext {
  kind: StoreKind;
  graph: ChaosGraph;
  /** The graph version a process started now runs (a deploy may be under way; chaos-deploy.ts). */
  graphVersion: (rng: Rng) => GraphVersion | undefined;
  servers: StoreServers | undefined;
  spawn: (params: AgentParams) => WorkerProcess;
  /** Runs a read of the store once PostgreSQL is up (it may be restarting). */
  stable: <T>(read: () => Promise<T>) => Promise<T>;
  /** Whether PostgreSQL was down (or just back) between the two times. */
  postgresDown: (from: number, to: number) => boolean;
}

/** A scenario's broken invariant, with the trace to look at it again. */
class ScenarioBreak extends Error {
  constructor(
    readonly broke: ChaosBreak,
    message: string,
  ) {
    super(message);
  }
}

/**
 * One seeded scenario of the chaos run: a user turn of one or two rounds of parallel calls
 * (random tools, onInDoubt policies, an approval step), worked by waves of one to three
 * processes at once, disrupted as `planWave` says, until the turn completes. The invariants are
 * checked after every wave, once its processes are gone; the counts go into `tally`.
 */
export async function runScenario(
  ctx: ScenarioContext,
  seed: number,
  tally: ChaosTally,
): Promise<void> {
  const rng = mulberry32(seed);
  const workload = workloadOf(ctx.graph, rng, seed);
  const scene = new CrashScene(`chaos-${seed}`, ctx.kind, workload.scene, {
    ...(ctx.servers ? { servers: ctx.servers } : {}),
    spawn: ctx.spawn,
    workerDeadlineMs: WORKER_DEADLINE_MS,
  });
  const trace = [`seed ${seed} on ${ctx.kind}: ${workload.description}`];
  let stored: unknown = null;
  let kills = 0;
  tally.scenarios += 1;
  try {
    for (let w = 0; ; w++) {
      if (w === MAX_WAVES) throw new ScenarioBreak("no_progress", `${MAX_WAVES} waves, no end`);
      const parent = stored === null ? null : workload.parent(stored);
      const kill = (kind: KillKind) => workload.kill(rng, stored, kind);
      const killsLeft = MAX_KILLS_PER_SCENARIO - kills;
      const processes = planWave(rng, workload, parent, kill, killsLeft).map((p) => {
        const graphVersion = ctx.graphVersion(rng);
        return {
          ...p,
          claimStaleAfterMs: CLAIM_STALE_AFTER_MS,
          ...(graphVersion === undefined ? {} : { graphVersion }),
        };
      });
      const stagger = processes.map((_, i) => (i === 0 ? 0 : between(rng, 0, MAX_STAGGER_MS)));
      const wave = await runWave(scene, processes, `w${w}`, stagger);
      kills += tallyWave(tally, wave);
      trace.push(...wave.runs.map((run) => `  wave ${w}: ${describeRun(run)}`));
      checkEndings(ctx, wave);
      const finished = await ctx.stable(
        async () => (await scene.read()).checkpoint?.status === "completed",
      );
      const label = `seed ${seed}, wave ${w}`;
      const before = stored;
      stored = await ctx.stable(() => workload.check(scene, stored, { finished, label }));
      countMigration(
        tally,
        before === null ? null : workload.parent(before),
        workload.parent(stored),
      );
      if (finished) break;
    }
    const wrong = workload.finalBreak(scene, stored);
    if (wrong) throw new ScenarioBreak(wrong.broke, wrong.message);
  } catch (error) {
    const broke =
      brokenInvariant(error) ?? (error instanceof ScenarioBreak ? error.broke : "worker");
    count(tally.broken, broke);
    const message = error instanceof Error ? error.message : String(error);
    trace.push(await storedForReport(ctx, scene));
    tally.failures.push({ seed, broke, message: `${message}\n${trace.join("\n")}` });
  } finally {
    const surfaced = surfacedInDoubt(scene);
    tally.inDoubtSurfaced += surfaced.length;
    for (const [policy, n] of Object.entries(byPolicy(surfaced))) {
      count(tally.inDoubtByPolicy, policy, n);
    }
    await ctx
      .stable(() => scene.dispose())
      .catch((error: unknown) => {
        // Dropping the schema waits for locks: one still held once every worker is gone is news.
        count(tally.broken, "worker");
        tally.failures.push({ seed, broke: "worker", message: `cleanup: ${String(error)}` });
      });
  }
}

/** Counts a thread version 2 carried over from version 1 (its checkpoint's graph version). */
function countMigration(tally: ChaosTally, before: StoredThread | null, now: StoredThread): void {
  if (before?.checkpoint?.graph?.version === "1" && now.checkpoint?.graph?.version === "2") {
    count(tally.deploy, "threads migrated");
  }
}

/** Counts the wave's processes, kills and stops; returns its kills. */
function tallyWave(tally: ChaosTally, wave: WaveOutcome): number {
  tally.waves += 1;
  tally.processes += wave.runs.length;
  if (wave.runs.length > 1) tally.concurrentWaves += 1;
  tally.sigstops += wave.stopped;
  const killed = wave.runs.filter((run) => run.exit.signal === "SIGKILL");
  for (const run of killed) count(tally.killsBy, disruptionOf(run.params) ?? "unplanned");
  for (const run of wave.runs) {
    const code = run.messages.find((m) => m.type === "failed")?.code;
    if (typeof code === "string") count(tally.refusals, code);
    const version = run.params.graphVersion;
    if (version !== undefined) count(tally.deploy, `v${version} runs`);
    if (version === 1 && code === "THREAD_007") count(tally.deploy, "v1 declined");
  }
  tally.kills += killed.length;
  return killed.length;
}

/**
 * Every process that was not killed exited cleanly, its run completed, paused, or was refused
 * for a reason a race explains; STORAGE_FAILURE_001 only while PostgreSQL was restarting.
 */
function checkEndings(ctx: ScenarioContext, wave: WaveOutcome): void {
  for (const run of wave.runs) {
    if (run.exit.signal === "SIGKILL") continue;
    const why = `${describeRun(run)}\n${run.stderr}`;
    if (run.exit.code !== 0 || run.exit.signal !== null) {
      throw new ScenarioBreak("worker", `worker exit ${JSON.stringify(run.exit)}: ${why}`);
    }
    const failed = run.messages.find((m) => m.type === "failed");
    if (!failed) continue;
    const code = String(failed.code);
    // An old worker declines a thread the new version wrote (a node or tool it lacks), as in a
    // rolling deploy; a new worker has a migration for every old thread, and never does.
    if (code === "THREAD_007" && run.params.graphVersion === 1) continue;
    const outage = code === "STORAGE_FAILURE_001" && ctx.postgresDown(wave.startedAt, wave.endedAt);
    if (!RACE_REFUSALS.has(code) && !outage) {
      throw new ScenarioBreak("worker", `run failed ${code}: ${String(failed.message)}\n${why}`);
    }
  }
}

/** What the store and the effect log hold, for the failure's trace (printed, not in results.md). */
async function storedForReport(ctx: ScenarioContext, scene: CrashScene): Promise<string> {
  try {
    const { ledger, effects, messages } = await ctx.stable(() => scene.read());
    const transcript = messages.map((m) => ({ id: m.id, role: m.role, text: Message.text(m) }));
    return `stored: ${JSON.stringify({ ledger, effects, transcript }, null, 1)}`;
  } catch (error) {
    return `stored: unreadable (${String(error)})`;
  }
}

function describeRun(run: WorkerRun): string {
  const { via, input } = run.params;
  const answer = input.kind === "resume" ? ` ${JSON.stringify(input.answer)}` : "";
  const planned = disruptionOf(run.params) ?? "undisturbed";
  const failed = run.messages.find((m) => m.type === "failed");
  const how =
    run.exit.signal === "SIGKILL"
      ? "killed"
      : String(run.done?.status ?? failed?.code ?? JSON.stringify(run.exit));
  const writes = run.messages.filter((m) => m.type === "write").map((m) => m.version);
  const version = run.params.graphVersion === undefined ? "" : ` (v${run.params.graphVersion})`;
  return `${via}${version} ${input.kind}${answer}, ${planned} -> ${how}; wrote ${JSON.stringify(writes)}`;
}
