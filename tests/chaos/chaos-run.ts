import { setTimeout as sleep } from "node:timers/promises";
import type { StoreKind } from "../support/store-spec.js";
import { ChaosServices } from "./chaos-services.js";
import { runScenario, type ScenarioContext } from "./chaos-scenario.js";
import type { ChaosGraph } from "./chaos-workload.js";
import {
  count,
  emptyTally,
  inDoubtByPolicy,
  otherFailures,
  type ChaosTally,
} from "./chaos-tally.js";
import { WarmPool } from "./warm-pool.js";
import { defaultDeploy, versionNow, type DeployPlan } from "./chaos-deploy.js";

/** What a chaos run does. */
export interface ChaosOptions {
  store: StoreKind;
  /** The graph its scenarios run (default: the support agent). */
  graph?: ChaosGraph;
  /** Stop starting scenarios once this many worker processes were killed. */
  kills: number;
  /** The first scenario's seed; the next ones count up from it. */
  seed: number;
  /** Scenarios run at once, each on its own thread and store. */
  lanes: number;
  /** Stop starting scenarios after this long, whatever the kills (the report says how many). */
  maxMinutes?: number;
  /**
   * The rolling deploy from version 1 to 2 of the graph in the middle of the run (default: the
   * support agent's, from 30% to 50% of the kills; `null`: none).
   */
  deploy?: DeployPlan | null;
  /** Where progress lines go. */
  log?: (line: string) => void;
}

/** Kills between two server disruptions of a PostgreSQL run (at least one of each per run). */
const KILLS_PER_SERVICE_EVENT = 125;
/** How often the server disruptor looks at the kill count. */
const SERVICE_POLL_MS = 100;

/**
 * Runs seeded scenarios on `options.store` until `options.kills` worker processes were killed
 * and returns the counts. On PostgreSQL the run starts its own servers and, spread over the
 * run, restarts PostgreSQL (a fast shutdown or a crash, in turn) and freezes Redis (SIGSTOP).
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosTally> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const tally = emptyTally(options.store);
  const services = options.store === "postgres" ? await ChaosServices.start() : null;
  // Enough warm processes for every lane's largest wave, plus the ones that replace the killed.
  const pool = new WarmPool(options.lanes * 3, (why) => {
    count(tally.broken, "worker");
    tally.failures.push({ seed: 0, broke: "worker", message: why });
  });
  const graph = options.graph ?? "support";
  const deploy =
    options.deploy === undefined ? defaultDeploy(graph, options.kills) : options.deploy;
  const ctx: ScenarioContext = {
    kind: options.store,
    graph,
    graphVersion: (rng) => versionNow(deploy, tally.kills, rng),
    servers: services?.servers,
    spawn: (params) => pool.take(params),
    stable: (read) => (services ? services.stable(read) : read()),
    postgresDown: (from, to) => services?.postgresDownDuring(from, to) ?? false,
  };
  const deadline = started + (options.maxMinutes ?? Infinity) * 60_000;
  const going = () => tally.kills < options.kills && Date.now() < deadline;
  let nextSeed = options.seed;
  let reported = 0;
  const lane = async () => {
    while (going()) {
      const failed = tally.failures.length;
      await runScenario(ctx, nextSeed++, tally);
      // A long run's failures are printed as they happen, each with its trace and what it stored.
      for (const failure of tally.failures.slice(failed)) {
        log(`FAILED seed ${failure.seed} (${failure.broke}):\n${failure.message}`);
      }
      if (tally.kills >= reported + 10 || !going()) {
        reported = tally.kills;
        log(progress(tally, started, options.kills));
      }
    }
  };
  let lanesDone = false;
  try {
    const lanes = Promise.all(Array.from({ length: options.lanes }, lane)).finally(
      () => (lanesDone = true),
    );
    await Promise.all([
      lanes,
      services && disruptServices(services, options, tally, () => lanesDone, log),
    ]);
  } finally {
    await pool.close();
    tally.events = services?.events ?? [];
    await services?.destroy();
  }
  tally.wallMs = Date.now() - started;
  return tally;
}

/**
 * Restarts PostgreSQL and freezes Redis in turn, every {@link KILLS_PER_SERVICE_EVENT} kills
 * (a short run gets one of each, at a third and two thirds of its kills), while workers run.
 */
async function disruptServices(
  services: ChaosServices,
  options: ChaosOptions,
  tally: ChaosTally,
  done: () => boolean,
  log: (line: string) => void,
): Promise<void> {
  const events = Math.max(2, Math.floor(options.kills / KILLS_PER_SERVICE_EVENT));
  const thresholds = Array.from({ length: events }, (_, i) =>
    Math.floor((options.kills * (i + 1)) / (events + 1)),
  );
  for (const [i, atKill] of thresholds.entries()) {
    while (tally.kills < atKill) {
      if (done()) return;
      await sleep(SERVICE_POLL_MS);
    }
    if (i % 2 === 0) {
      const crash = i % 4 === 2;
      log(`[postgres] ${crash ? "crashing" : "stopping"} PostgreSQL at kill ${tally.kills}`);
      await services.restartPostgres(tally.kills, 500, crash);
    } else {
      log(`[postgres] freezing Redis (SIGSTOP) at kill ${tally.kills}`);
      await services.freezeRedis(tally.kills, 2_000);
    }
  }
}

function progress(tally: ChaosTally, started: number, target: number): string {
  const minutes = (Date.now() - started) / 60_000;
  const broken =
    (tally.broken.duplicate ?? 0) +
    (tally.broken.lost_message ?? 0) +
    (tally.broken.lost_update ?? 0) +
    otherFailures(tally);
  return (
    `[${tally.store}] kills ${tally.kills}/${target}, SIGSTOPs ${tally.sigstops}, ` +
    `scenarios ${tally.scenarios}, in doubt ${tally.inDoubtSurfaced} ` +
    `(${inDoubtByPolicy(tally)}), broken ${broken}, ` +
    `${(tally.kills / Math.max(minutes, 1e-9)).toFixed(1)} kills/min`
  );
}
