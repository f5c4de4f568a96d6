import { KILL_KINDS, type KillKind } from "./random-plan.js";

/** How a crash loop spreads its scenarios. */
export interface SeedLanes {
  /** Stop starting scenarios once this many processes were killed in all. */
  kills: number;
  /** The first scenario's seed; the next ones count up from it. */
  firstSeed: number;
  /** Scenarios run at once. */
  lanes: number;
}

/**
 * Runs seeded scenarios `lanes` at a time until `kills` processes were killed. Scenarios are
 * independent (own store, own thread): two at a time keep both cores busy while a worker starts
 * or waits on IPC. `scenario` returns how many processes it killed; its first kill is of the
 * kind the seed picks, each kind leading in turn, so one seed replays on its own. The first
 * failure stops every lane before it is thrown.
 */
export async function runSeedLanes(
  { kills, firstSeed, lanes }: SeedLanes,
  scenario: (seed: number, firstKill: KillKind) => Promise<number>,
): Promise<void> {
  let killed = 0;
  let nextSeed = firstSeed;
  const failures: unknown[] = [];
  const lane = async () => {
    while (killed < kills && failures.length === 0) {
      const seed = nextSeed++;
      try {
        const n = await scenario(seed, KILL_KINDS[seed % KILL_KINDS.length]!);
        killed += n; // after the await: the other lanes add to `killed` meanwhile
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  if (failures.length > 0) throw failures[0];
}
