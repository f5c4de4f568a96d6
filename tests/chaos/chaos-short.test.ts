/**
 * The chaos run, short: about 50 kills per store (SIGKILL at fault points and at random
 * moments, SIGSTOP then SIGKILL or SIGCONT, hung tools), with two and three processes on a
 * thread at once, mixed onInDoubt policies, and on PostgreSQL a server restart and a Redis
 * freeze in the middle, and for the support agent a rolling deploy of its version 2 (a tool renamed
 * through a migration, a node added) from 30% to 50% of the kills. It fails on any broken invariant, and when the disruptions it claims to
 * make did not happen. Then the same for the composition team (a supervisor's Send fan-out to
 * two subgraph workers on child threads), 20 kills per store. `npm run chaos -- --kills 1000`
 * (`--graph team`) is the long run.
 */
import { describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { runChaos } from "./chaos-run.js";
import { details, otherFailures } from "./chaos-tally.js";
import type { ChaosGraph } from "./chaos-workload.js";

const KILLS = Number(process.env.TENXGRAPH_CHAOS_KILLS ?? 50);
/** The team's scenarios take longer (three child threads each): fewer kills keep CI short. */
const TEAM_KILLS = Number(process.env.TENXGRAPH_CHAOS_TEAM_KILLS ?? 20);
const GRAPHS: readonly { graph: ChaosGraph; kills: number }[] = [
  { graph: "support", kills: KILLS },
  { graph: "team", kills: TEAM_KILLS },
];
const SEED = Number(process.env.TENXGRAPH_CHAOS_SEED ?? 1);
/** Far above what 50 kills take on a busy two-core machine; a hung run fails, not waits. */
const TIMEOUT_MS = 15 * 60_000;

describe.each(STORES)("chaos on $label (real processes, SIGKILL and SIGSTOP)", ({ kind }) => {
  it.each(GRAPHS)(
    `$graph: no recorded call runs twice, no message or update is lost, across $kills kills (seed ${SEED})`,
    async ({ graph, kills }) => {
      const tally = await runChaos({ store: kind, graph, kills, seed: SEED, lanes: 3 });
      const summary = `${details(tally)}\n${tally.failures.map((f) => f.message).join("\n\n")}`;
      expect(tally.broken.duplicate ?? 0, `duplicates of recorded calls\n${summary}`).toBe(0);
      expect(tally.broken.lost_message ?? 0, `lost messages\n${summary}`).toBe(0);
      expect(tally.broken.lost_update ?? 0, `lost updates\n${summary}`).toBe(0);
      expect(otherFailures(tally), `other failures\n${summary}`).toBe(0);
      // A run that disrupted nothing would pass the checks above and prove nothing.
      expect(tally.kills, summary).toBeGreaterThanOrEqual(kills);
      expect(tally.sigstops, `SIGSTOPs\n${summary}`).toBeGreaterThan(0);
      expect(tally.concurrentWaves, `waves of two or three processes\n${summary}`).toBeGreaterThan(
        0,
      );
      expect(tally.inDoubtSurfaced, `in-doubt calls surfaced\n${summary}`).toBeGreaterThan(0);
      if (graph === "support") {
        // The deploy in the middle happened with threads in flight: version 2 ran, and carried
        // threads version 1 had written on (chaos-deploy.ts).
        expect(tally.deploy["v2 runs"] ?? 0, `version 2 runs\n${summary}`).toBeGreaterThan(0);
        expect(
          tally.deploy["threads migrated"] ?? 0,
          `threads carried from version 1 to 2\n${summary}`,
        ).toBeGreaterThan(0);
      }
      if (kind === "postgres") {
        const what = tally.events.map((e) => e.what);
        expect(
          what.some((w) => w.startsWith("postgres")),
          `PostgreSQL restarted\n${summary}`,
        ).toBe(true);
        expect(what, `Redis frozen\n${summary}`).toContain("redis-freeze");
      }
    },
    TIMEOUT_MS,
  );
});
