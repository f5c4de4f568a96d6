import type { StoreKind } from "../support/store-spec.js";
import type { ServiceEvent } from "./chaos-services.js";
import { IN_DOUBT_POLICIES, type PolicyCount } from "../crash/support/in-doubt-report.js";

/** What broke in a scenario: an invariant of the crash checks, or the run itself. */
export type ChaosBreak =
  | "duplicate"
  | "lost_message"
  | "lost_update"
  | "replay_report"
  | "finish"
  | "unsurfaced"
  | "worker"
  | "no_progress";

/** One broken scenario, with what it takes to look at it again. */
export interface ChaosFailure {
  seed: number;
  broke: ChaosBreak;
  message: string;
}

/** The counts of a chaos run on one store. */
export interface ChaosTally {
  store: StoreKind;
  kills: number;
  /** Processes SIGSTOPped (then killed or let go on). */
  sigstops: number;
  scenarios: number;
  waves: number;
  /** Waves of two or three processes on the thread at once. */
  concurrentWaves: number;
  processes: number;
  /** Kills by how they came, to show every way was reached. */
  killsBy: Record<string, number>;
  /** Runs that ended refused by a race (STORAGE_CONFLICT_001, THREAD_001, …), by code. */
  refusals: Record<string, number>;
  inDoubtSurfaced: number;
  /**
   * The same calls by the `onInDoubt` policy of their tool (each of IN_DOUBT_POLICIES, 0 when
   * none; "unknown" only when a warning named no tool or policy): they add up to the total.
   */
  inDoubtByPolicy: Partial<Record<PolicyCount, number>>;
  /**
   * The deploy in the middle (chaos-deploy.ts): runs by version (`v1 runs`, `v2 runs`), runs of
   * version 1 that declined a thread version 2 wrote (`v1 declined`, THREAD_007), and threads
   * that version 2 carried over from version 1 (`threads migrated`). Empty without a deploy.
   */
  deploy: Record<string, number>;
  /** Scenarios whose invariants broke, by what broke. */
  broken: Partial<Record<ChaosBreak, number>>;
  failures: ChaosFailure[];
  events: ServiceEvent[];
  wallMs: number;
}

export function emptyTally(store: StoreKind): ChaosTally {
  return {
    store,
    kills: 0,
    sigstops: 0,
    scenarios: 0,
    waves: 0,
    concurrentWaves: 0,
    processes: 0,
    killsBy: {},
    refusals: {},
    inDoubtSurfaced: 0,
    inDoubtByPolicy: Object.fromEntries(IN_DOUBT_POLICIES.map((p) => [p, 0])),
    deploy: {},
    broken: {},
    failures: [],
    events: [],
    wallMs: 0,
  };
}

/** Adds `n` to `counts[key]`. */
export function count(counts: Record<string, number>, key: string, n = 1): void {
  counts[key] = (counts[key] ?? 0) + n;
}

/** Breaks outside the three named columns: all must be 0 as well. */
export function otherFailures(tally: ChaosTally): number {
  const { duplicate: _d, lost_message: _m, lost_update: _u, ...rest } = tally.broken;
  return Object.values(rest).reduce((sum, n) => sum + n, 0);
}

/** True when every invariant held (the in-doubt count is a count, not a failure). */
export function held(tally: ChaosTally): boolean {
  return tally.failures.length === 0;
}

export const HEADER = [
  "store",
  "kills",
  "SIGSTOPs",
  "duplicates of recorded calls",
  "lost messages",
  "in-doubt calls surfaced",
  ...IN_DOUBT_POLICIES.map((p) => `in doubt: ${p}`),
  "lost updates",
  "other failures",
  "wall time",
];

/** The results as a markdown table, one row per store. */
export function markdownTable(tallies: readonly ChaosTally[]): string {
  const rows = tallies.map((t) => [
    t.store === "sqlite" ? "SQLite" : "PostgreSQL + Redis",
    String(t.kills),
    String(t.sigstops),
    String(t.broken.duplicate ?? 0),
    String(t.broken.lost_message ?? 0),
    String(t.inDoubtSurfaced),
    ...IN_DOUBT_POLICIES.map((p) => String(t.inDoubtByPolicy[p] ?? 0)),
    String(t.broken.lost_update ?? 0),
    String(otherFailures(t)),
    wallTime(t.wallMs),
  ]);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(HEADER), line(HEADER.map(() => "---")), ...rows.map(line)].join("\n");
}

/** Where the per-policy cells sit in a row (after the total), for rows written before them. */
export const POLICY_COLUMNS = {
  at: HEADER.indexOf("in-doubt calls surfaced") + 1,
  count: IN_DOUBT_POLICIES.length,
};

/** `retry 12, fail 3, interrupt 2, reconcile 4` (and `unknown n` if any). */
export function inDoubtByPolicy(tally: ChaosTally): string {
  return Object.entries(tally.inDoubtByPolicy)
    .map(([policy, n]) => `${policy} ${n}`)
    .join(", ");
}

/** `12 min 05 s`, or `48 s`. */
export function wallTime(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, "0")} s`;
}

/** The details under the table: what was reached, the server disruptions, every failure. */
export function details(tally: ChaosTally): string {
  const pairs = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([key, n]) => `${key} ${n}`)
      .join(", ") || "none";
  const events = tally.events.map(
    (e) => `${e.what} at kill ${e.atKill} (${Math.round(e.endedAt - e.startedAt)} ms)`,
  );
  const lines = [
    `- scenarios ${tally.scenarios}, waves ${tally.waves} (${tally.concurrentWaves} with two or three processes at once), processes ${tally.processes}`,
    `- in-doubt calls surfaced ${tally.inDoubtSurfaced}, by the tool's onInDoubt: ${inDoubtByPolicy(tally)}`,
    `- kills by way: ${pairs(tally.killsBy)}`,
    `- runs refused by a race: ${pairs(tally.refusals)}`,
    ...(Object.keys(tally.deploy).length > 0 ? [`- deploy: ${pairs(tally.deploy)}`] : []),
    ...(events.length > 0 ? [`- servers: ${events.join("; ")}`] : []),
    ...tally.failures.map(
      (f) => `- FAILED seed ${f.seed} (${f.broke}): ${f.message.split("\n")[0]}`,
    ),
  ];
  return lines.join("\n");
}
