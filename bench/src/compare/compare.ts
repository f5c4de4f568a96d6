/**
 * The regression gate: this tree against a base commit (by default the accepted baseline in
 * `bench/baseline-ref`), workload by workload, each run in a fresh child process on its own
 * tree's packages, base and new interleaved round by round. Reports CPU and wall time per step
 * and the ratio new/base; exits 1 when a workload's CPU per step grew past the threshold.
 *
 * `npm run bench:compare -- [--base <ref>] [--quick] [--rounds N] [--threshold 1.25]
 *   [--out bench/compare.md] [--keep-base] [--only <text>]`
 *
 * `--only` keeps the workloads whose name contains the text (e.g. `--only postgres`), for timing
 * one change; the gate in CI runs them all.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PostgresServer } from "@tenxgraph/test-servers";
import { prepareBaseTree, readBaselineRef, resolveCommit } from "./base-tree.js";
import { runChild, type Side } from "./run-child.js";
import { renderCompare, summarize, type Sample } from "./compare-report.js";
import type { ChildSpec } from "./child.js";

/** A workload as the gate names it, and how many runs each child times. */
export interface CompareWorkload {
  name: string;
  spec: Omit<ChildSpec, "postgresDsn" | "schema">;
}

/** Rounds run again for a workload past the threshold; the gate then judges all its rounds. */
const CONFIRM_ROUNDS = 4;

const WORKLOADS: CompareWorkload[] = [
  {
    name: "memory 5x1",
    spec: { store: "memory", turns: 5, toolsPerTurn: 1, warmupSteps: 8000, runs: 1000 },
  },
  {
    name: "memory 5x4",
    spec: { store: "memory", turns: 5, toolsPerTurn: 4, warmupSteps: 8000, runs: 1000 },
  },
  {
    name: "memory 50x1",
    spec: { store: "memory", turns: 50, toolsPerTurn: 1, warmupSteps: 8000, runs: 100 },
  },
  {
    name: "memory 50x4",
    spec: { store: "memory", turns: 50, toolsPerTurn: 4, warmupSteps: 8000, runs: 100 },
  },
  {
    name: "memory 200x1",
    spec: { store: "memory", turns: 200, toolsPerTurn: 1, warmupSteps: 8000, runs: 25 },
  },
  {
    name: "memory 200x4",
    spec: { store: "memory", turns: 200, toolsPerTurn: 4, warmupSteps: 8000, runs: 25 },
  },
  {
    name: "sqlite FULL 50x1",
    spec: { store: "sqlite", turns: 50, toolsPerTurn: 1, warmupSteps: 4000, runs: 30 },
  },
  {
    name: "postgres 50x1",
    spec: { store: "postgres", turns: 50, toolsPerTurn: 1, warmupSteps: 3000, runs: 20 },
  },
  {
    name: "http invoke",
    spec: { store: "http", turns: 1, toolsPerTurn: 0, warmupSteps: 3000, runs: 3000 },
  },
];

interface Options {
  base: string | undefined;
  rounds: number;
  threshold: number;
  out: string;
  keepBase: boolean;
  only: string | undefined;
}

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");
/** Where the child sits in any tree; the base tree gets this tree's copy there. */
const CHILD_PATH = join("bench", "src", "compare", "child.ts");

function parseOptions(argv: string[]): Options {
  const options: Options = {
    base: undefined,
    rounds: 7,
    threshold: 1.25,
    out: join(repoRoot, "bench", "compare.md"),
    keepBase: false,
    only: undefined,
  };
  let rounds: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === "--base") options.base = value();
    else if (arg === "--quick") options.rounds = 3;
    else if (arg === "--rounds") rounds = Number(value());
    else if (arg === "--threshold") options.threshold = Number(value());
    // npm runs this script from bench/; a path given on the command line means where npm was run.
    else if (arg === "--out") options.out = resolve(process.env.INIT_CWD ?? process.cwd(), value());
    else if (arg === "--keep-base") options.keepBase = true;
    else if (arg === "--only") options.only = value();
    else throw new Error(`unknown option ${arg}`);
  }
  if (rounds !== undefined) options.rounds = rounds;
  if (!Number.isInteger(options.rounds) || options.rounds < 1) {
    throw new Error("--rounds must be a whole number of at least 1");
  }
  if (options.only !== undefined && !WORKLOADS.some((w) => w.name.includes(options.only!))) {
    throw new Error(
      `--only ${options.only} names no workload; they are: ${WORKLOADS.map((w) => w.name).join(", ")}`,
    );
  }
  if (!(options.threshold > 1)) throw new Error("--threshold must be a ratio above 1, e.g. 1.25");
  return options;
}

/** This tree's commit, marked when the work tree has changes on top of it. */
function describeNewTree(): string {
  const sha = execFileSync("git", ["rev-parse", "HEAD"], { cwd: repoRoot, encoding: "utf8" });
  const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  return `${sha.trim().slice(0, 12)}${dirty.trim() ? " + uncommitted changes" : ""}`;
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  // Interrupted, it still exits through `exit`, where the base tree is removed.
  process.once("SIGINT", () => process.exit(130));
  process.once("SIGTERM", () => process.exit(143));
  const workloads = WORKLOADS.filter(
    (w) => options.only === undefined || w.name.includes(options.only),
  );
  const ref = options.base ?? readBaselineRef(repoRoot);
  const sha = resolveCommit(repoRoot, ref);
  const base = prepareBaseTree(repoRoot, sha, options.keepBase);
  const postgres = await PostgresServer.start({ name: "bench-compare", fsync: true });
  const samples: Sample[] = [];
  const measure = async (chosen: CompareWorkload[], firstRound: number, rounds: number) => {
    const roots: Record<Side, string> = { base: base.root, new: repoRoot };
    for (let round = firstRound; round < firstRound + rounds; round++) {
      // Alternate who goes first, so neither side always meets a warmer or busier machine.
      const order: Side[] = round % 2 === 0 ? ["base", "new"] : ["new", "base"];
      for (const workload of chosen) {
        for (const side of order) {
          const spec: ChildSpec = {
            ...workload.spec,
            postgresDsn: postgres.dsn,
            schema: `compare_${side}_${round}`,
          };
          const result = await runChild(join(roots[side], CHILD_PATH), roots[side], spec);
          samples.push({ workload: workload.name, side, round, ...result });
        }
      }
      process.stderr.write(`round ${round + 1}/${firstRound + rounds} done\n`);
    }
  };
  const names = workloads.map((w) => w.name);
  const verdict = () => summarize(names, samples, options.threshold);
  const remeasured: string[] = [];
  try {
    // Both sides run this tree's child, so they time the very same workload code.
    mkdirSync(dirname(join(base.root, CHILD_PATH)), { recursive: true });
    copyFileSync(join(repoRoot, CHILD_PATH), join(base.root, CHILD_PATH));
    await measure(workloads, 0, options.rounds);
    // A workload past the threshold is measured again before it fails the gate: a short one
    // can cross it on a noisy round or two, a real slowdown stays.
    const past = new Set(
      verdict()
        .filter((row) => row.regressed)
        .map((row) => row.workload),
    );
    remeasured.push(...names.filter((name) => past.has(name)));
    if (remeasured.length > 0) {
      process.stderr.write(`past the threshold, measured again: ${remeasured.join(", ")}\n`);
      const again = workloads.filter((w) => past.has(w.name));
      await measure(again, options.rounds, CONFIRM_ROUNDS);
    }
  } finally {
    await postgres.destroy();
    base.release();
  }
  const rows = verdict();
  const report = renderCompare(rows, {
    base: sha.startsWith(ref) ? sha.slice(0, 12) : `${ref} (${sha.slice(0, 12)})`,
    next: describeNewTree(),
    rounds: options.rounds,
    threshold: options.threshold,
    remeasured: { workloads: remeasured, rounds: CONFIRM_ROUNDS },
  });
  process.stdout.write(report);
  writeFileSync(options.out, report);
  // Every child's totals beside the report, to look at the rounds behind a verdict.
  writeFileSync(options.out.replace(/\.md$/, "") + ".samples.json", JSON.stringify(samples));
  const failed = rows.filter((row) => row.regressed);
  if (failed.length === 0) return 0;
  process.stderr.write(
    `bench:compare: CPU per step regressed past ${options.threshold}x on: ` +
      `${failed.map((row) => `${row.workload} (${row.cpuRatio.toFixed(2)}x)`).join(", ")}\n`,
  );
  return 1;
}

process.exitCode = await main();
