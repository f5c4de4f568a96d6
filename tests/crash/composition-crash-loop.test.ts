/**
 * The seeded crash loop of composition, in real processes: a supervisor fans out with `Send` to
 * two subgraph workers (billing: a lookup and a charge per order; mailer: a receipt per order,
 * in parallel), each on a child thread of its own, then joins their reports (team-agent.ts).
 * Each worker process draws invoke or stream and may be armed to die: SIGKILL at a fault point
 * (in the parent or inside a child), hung in a tool and killed from outside, or killed from
 * outside at a random moment. Fresh processes continue or answer the pending interrupts
 * (approvals, in-doubt calls surfaced through the parent) until the team completes, and the
 * invariants are checked on every thread after every process (team-invariants.ts).
 *
 * The loop runs once per store. `TENXGRAPH_CRASH_KILLS=<n>` sets how many kills to reach on each
 * (default 12 on SQLite, 8 on PostgreSQL + Redis, to keep CI short); `TENXGRAPH_CRASH_SEED=<s>`
 * the first scenario's seed (a failure prints the one to rerun); `-t SQLite` or `-t PostgreSQL`
 * picks one store; `TENXGRAPH_CRASH_TRACE=1` prints what each process of each scenario did.
 */
import { describe, expect, it } from "vitest";
import { STORES, type StoreKind } from "../support/store-spec.js";
import type { AgentParams } from "./support/agent-params.js";
import { surfacedInDoubt } from "./support/in-doubt-report.js";
import { CrashScene, type WorkerRun } from "./support/crash-scene.js";
import { mulberry32, pick } from "./support/prng.js";
import { KILL_KINDS, nextInput, type KillKind } from "./support/random-plan.js";
import { TEAM_NODES } from "./support/team-agent.js";
import { runSeedLanes } from "./support/seed-lanes.js";
import {
  checkTeamInvariants,
  unsurfacedInTeam,
  type StoredTeam,
} from "./support/team-invariants.js";
import { describeTeam, planTeam, randomTeamKill } from "./support/team-plan.js";

const DEFAULT_KILLS: Record<StoreKind, number> = { sqlite: 12, postgres: 8 };
/** A loop this long must have died in the parent and inside a child, and paused; a shorter one may not. */
const KILLS_FOR_COVERAGE = 12;
const FIRST_SEED = Number(process.env.TENXGRAPH_CRASH_SEED ?? 1);
const MAX_KILLS_PER_SCENARIO = 3;
/** Far more processes than any scenario needs: beyond it, the team is not making progress. */
const MAX_PROCESSES_PER_SCENARIO = 16;
const LANES = 2;
/** The team's own nodes: a kill whose fault fired in one of them died in the parent. */
const PARENT_NODES = new Set<string>(Object.values(TEAM_NODES));

/** What the loop reached, to show it dies everywhere it should. */
interface Coverage {
  kills: Partial<Record<KillKind, number>>;
  /** Kills at a fault point in the parent's nodes, and inside a worker's child thread. */
  inParent: number;
  inChild: number;
  pauses: number;
  /** In-doubt calls the runs warned of (each must be, see unsurfacedInTeam). */
  inDoubt: number;
}

describe.each(STORES)(
  "composition crash loop on $label (real processes, SIGKILL)",
  ({ kind, label }) => {
    const KILLS = Math.max(1, Number(process.env.TENXGRAPH_CRASH_KILLS ?? DEFAULT_KILLS[kind]));
    it(`keeps every thread of a Send fan-out to subgraph workers consistent across ${KILLS} kills (seed ${FIRST_SEED})`, async () => {
      const coverage: Coverage = {
        kills: {},
        inParent: 0,
        inChild: 0,
        pauses: 0,
        inDoubt: 0,
      };
      await runSeedLanes({ kills: KILLS, firstSeed: FIRST_SEED, lanes: LANES }, (seed, firstKill) =>
        runScenario(kind, label, seed, firstKill, coverage),
      );
      if (KILLS >= KILLS_FOR_COVERAGE) {
        expect(coverage.inParent, "kills at a fault point of the parent").toBeGreaterThan(0);
        expect(coverage.inChild, "kills at a fault point inside a worker").toBeGreaterThan(0);
        expect(coverage.pauses, "runs paused by a worker's interrupt").toBeGreaterThan(0);
        expect(coverage.inDoubt, "in-doubt calls in the workers, surfaced").toBeGreaterThan(0);
      }
    }, 900_000);
  },
);

/** Runs one scenario on `kind` until the team completes; returns how many processes were killed. */
async function runScenario(
  kind: StoreKind,
  label: string,
  seed: number,
  firstKill: KillKind,
  coverage: Coverage,
): Promise<number> {
  const rng = mulberry32(seed);
  const plan = planTeam(rng, seed);
  const scene = new CrashScene(`team-${seed}`, kind, {
    threadId: plan.threadId,
    rounds: [],
    answer: "",
    team: plan.team,
  });
  const trace = [`seed ${seed} on ${label}: ${describeTeam(plan)}`];
  let stored: StoredTeam | null = null;
  let kills = 0;
  try {
    for (let n = 0; ; n++) {
      expect(n, "processes without completing the team").toBeLessThan(MAX_PROCESSES_PER_SCENARIO);
      const armed =
        n === 0
          ? firstKill
          : kills < MAX_KILLS_PER_SCENARIO && rng() < 0.7
            ? pick(rng, KILL_KINDS)
            : null;
      const params: Partial<AgentParams> & Pick<AgentParams, "via" | "input"> = {
        via: pick(rng, ["invoke", "stream"] as const),
        input: nextInput(rng, stored?.parent ?? null, `run the team (${plan.threadId})`),
        policies: plan.policies,
        approval: plan.approval,
        metrics: false,
        ...(armed ? randomTeamKill(rng, plan.team, armed) : {}),
      };
      const run = await scene.runArmed(params);
      trace.push(`  run ${n}: ${describeRun(run)}`);
      if (run.exit.signal === "SIGKILL") {
        kills += 1;
        count(coverage, params, run);
      } else {
        expect(run.exit, `worker exit\n${run.stderr}`).toEqual({ code: 0, signal: null });
        const failed = run.messages.find((m) => m.type === "failed");
        expect(failed, "the run rejected").toBeUndefined();
        if (run.done?.status === "interrupted") coverage.pauses += 1;
      }
      const finished = (await scene.read()).checkpoint?.status === "completed";
      stored = await checkTeamInvariants(scene, stored, {
        plan: plan.team,
        finished,
        label: `seed ${seed}, run ${n}`,
      });
      if (finished) {
        expect(unsurfacedInTeam(scene, stored), "in-doubt calls nobody was told of").toEqual([]);
        coverage.inDoubt += surfacedInDoubt(scene).length;
        if (process.env.TENXGRAPH_CRASH_TRACE) console.log(trace.join("\n"));
        return kills;
      }
    }
  } catch (error) {
    if (error instanceof Error) {
      error.message =
        `composition crash loop failed at seed ${seed} on ${label} (rerun: TENXGRAPH_CRASH_SEED=${seed} ` +
        `TENXGRAPH_CRASH_KILLS=1 npx vitest run tests/crash/composition-crash-loop.test.ts -t ${label.split(" ")[0]})\n` +
        `${trace.join("\n")}\n${error.message}`;
    }
    throw error;
  } finally {
    await scene.dispose();
  }
}

function count(coverage: Coverage, params: Partial<AgentParams>, run: WorkerRun): void {
  const kind: KillKind = params.hang ? "hang" : (params.kill?.point ?? "anytime");
  coverage.kills[kind] = (coverage.kills[kind] ?? 0) + 1;
  const node = run.killing?.node;
  if (typeof node !== "string") return;
  if (PARENT_NODES.has(node)) coverage.inParent += 1;
  else coverage.inChild += 1;
}

function describeRun(run: WorkerRun): string {
  const { via, input, kill, hang, outsideKillMs } = run.params;
  const answer =
    input.kind === "resume"
      ? ` ${JSON.stringify(input.answer)} ${input.interruptId ? `to ${input.interruptId}` : "(a map of answers)"}`
      : "";
  const armed = hang
    ? `hang ${hang}`
    : kill
      ? `kill at ${kill.point}${kill.tool ? ` ${kill.tool}` : ""} #${kill.hit ?? 1}`
      : outsideKillMs !== undefined
        ? `kill ${outsideKillMs} ms after the first write`
        : "unarmed";
  const failed = run.messages.find((m) => m.type === "failed");
  const how =
    run.exit.signal === "SIGKILL"
      ? run.killing
        ? `killed at ${String(run.killing.point)} in ${String(run.killing.thread)} ${String(run.killing.node)}`
        : "killed from outside"
      : `ended ${String(run.done?.status ?? JSON.stringify(failed ?? run.exit))}`;
  return `${via} ${input.kind}${answer}, ${armed} -> ${how}`;
}
