/**
 * `npm run chaos -- --kills 1000 --store sqlite|postgres [--graph support|team] [--seed 1]
 * [--lanes 2] [--max-minutes N] [--no-deploy] [--results tests/chaos/results.md]`
 *
 * The support agent's run deploys its version 2 in the middle (tests/chaos/chaos-deploy.ts:
 * a rolling deploy from 30% to 50% of the kills); `--no-deploy` keeps version 1 throughout.
 *
 * `--graph team` runs the composition team (a supervisor's Send fan-out to two subgraph
 * workers on child threads, tests/crash/support/team-agent.ts) instead of the support agent;
 * its results go to tests/chaos/results-team.md unless `--results` says otherwise.
 *
 * SIGKILLs and SIGSTOPs agent worker processes at random moments, with two and three of them on
 * a thread at once, until `--kills` processes died (on both stores when `--store` is not given),
 * checks the crash suite's invariants after every wave, prints a table and writes it to the
 * results file (the rows of the stores run now replace theirs). Exits 1 when an invariant broke.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { format, resolveConfig } from "prettier";
import { STORE_KINDS, storeLabel, type StoreKind } from "../support/store-spec.js";
import { runChaos } from "./chaos-run.js";
import { CHAOS_GRAPHS, type ChaosGraph } from "./chaos-workload.js";
import {
  HEADER,
  POLICY_COLUMNS,
  details,
  held,
  markdownTable,
  type ChaosTally,
} from "./chaos-tally.js";

/** Everything from this line on in the results file is written by hand, and kept as it is. */
const KEPT = "<!-- written by hand from here on: npm run chaos keeps it -->";

const { values } = parseArgs({
  options: {
    kills: { type: "string", default: "1000" },
    store: { type: "string" },
    seed: { type: "string", default: "1" },
    lanes: { type: "string", default: "2" },
    "max-minutes": { type: "string" },
    graph: { type: "string", default: "support" },
    results: { type: "string" },
    "no-deploy": { type: "boolean", default: false },
  },
});
const stores = values.store === undefined ? STORE_KINDS : [values.store as StoreKind];
if (!stores.every((store) => STORE_KINDS.includes(store))) {
  throw new Error(`--store must be one of ${STORE_KINDS.join(", ")}`);
}
const graph = values.graph as ChaosGraph;
if (!CHAOS_GRAPHS.includes(graph))
  throw new Error(`--graph must be one of ${CHAOS_GRAPHS.join(", ")}`);
const resultsPath =
  values.results ?? (graph === "team" ? "tests/chaos/results-team.md" : "tests/chaos/results.md");
const kills = Number(values.kills);
const seed = Number(values.seed);
const maxMinutes = values["max-minutes"] === undefined ? undefined : Number(values["max-minutes"]);

const measured = measuredCommit();
const tallies: ChaosTally[] = [];
for (const store of stores) {
  console.log(`[${store}] chaos (${graph}): ${kills} kills, seed ${seed}, lanes ${values.lanes}`);
  tallies.push(
    await runChaos({
      store,
      graph,
      kills,
      seed,
      lanes: Number(values.lanes),
      ...(maxMinutes === undefined ? {} : { maxMinutes }),
      ...(values["no-deploy"] ? { deploy: null } : {}),
      log: (line) => console.log(line),
    }),
  );
}
const command = `npm run chaos -- ${process.argv.slice(2).join(" ")}`.trim();
for (const tally of tallies) {
  console.log(`\n${tally.store}:\n${details(tally)}`);
  for (const failure of tally.failures) console.log(`\nseed ${failure.seed}:\n${failure.message}`);
}
console.log(`\n${markdownTable(tallies)}`);
await writeResults(resultsPath, tallies, command, measured);
const short = tallies.filter((t) => t.kills < kills);
if (short.length > 0)
  console.log(`\nstopped early (--max-minutes) on ${short.map((t) => t.store)}`);
process.exit(tallies.every(held) && tallies.every((t) => t.kills > 0) ? 0 : 1);

/**
 * Writes the table and each store's details to `path`, keeping the rows and details of stores
 * not run this time (each store's part sits between markers of its own) and the hand-written
 * part from {@link KEPT} on.
 */
async function writeResults(
  path: string,
  fresh: ChaosTally[],
  command: string,
  measured: string,
): Promise<void> {
  const old = existsSync(path) ? readFileSync(path, "utf8") : "";
  const parts = new Map<StoreKind, string>();
  const rows = new Map<StoreKind, string>();
  for (const store of STORE_KINDS) {
    const part = new RegExp(`<!-- ${store} -->\\n([\\s\\S]*?)<!-- /${store} -->`).exec(old);
    const row = new RegExp(`<!-- row ${store}: (.*) -->`).exec(old);
    if (part?.[1] && row?.[1]) {
      // The heading is written below, so a kept part drops its own (and any copies an older
      // version of this function left, which doubled it on every run).
      parts.set(store, part[1].replace(/^(\s*### .*\n)+\s*/, "").replace(/\s*$/, "\n"));
      rows.set(store, withPolicyCells(row[1]));
    }
  }
  for (const tally of fresh) {
    const when = new Date().toISOString().slice(0, 16).replace("T", " ");
    parts.set(tally.store, `\`${command}\` (${when} UTC, ${measured})\n\n${details(tally)}\n`);
    rows.set(tally.store, markdownTable([tally]).split("\n")[2]!);
  }
  const stores = STORE_KINDS.filter((store) => parts.has(store));
  const table = markdownTable([])
    .split("\n")
    .concat(stores.map((s) => rows.get(s)!));
  const text = [
    graph === "team" ? "# Chaos run results: the team of subgraph workers" : "# Chaos run results",
    "",
    "Written by `npm run chaos` (tests/chaos/run-chaos.ts); every column but the in-doubt counts",
    "(the total, then by the `onInDoubt` policy of the call's tool) must be 0.",
    "",
    ...table,
    "",
    ...stores.flatMap((store) => [
      `<!-- row ${store}: ${rows.get(store)} -->`,
      `<!-- ${store} -->`,
      `### ${storeLabel(store)}\n`,
      parts.get(store)!,
      `<!-- /${store} -->`,
      "",
    ]),
  ].join("\n");
  const kept = old.indexOf(KEPT);
  const whole = kept === -1 ? text : `${text}${old.slice(kept)}`;
  // Formatted as the repository's files are, so `prettier --check .` passes after a run.
  const options = (await resolveConfig("tests/chaos/results.md")) ?? {};
  writeFileSync(path, await format(whole, { ...options, parser: "markdown" }));
}

/**
 * The commit the run measures (`git rev-parse --short HEAD`), and `+ uncommitted changes` when
 * the packages or the tests differ from it (a results file aside).
 */
function measuredCommit(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8" }).trim();
    const changed = git("status", "--porcelain", "--untracked-files=no", "--", "packages", "tests")
      .split("\n")
      .filter((line) => line !== "" && !line.endsWith("results.md"));
    const head = git("rev-parse", "--short", "HEAD");
    return `commit ${head}${changed.length > 0 ? " + uncommitted changes" : ""}`;
  } catch {
    return "commit unknown";
  }
}

/** A row kept from before the per-policy columns, with "–" in them (it did not count them). */
function withPolicyCells(row: string): string {
  const cells = row.replace(/^\|\s*|\s*\|$/g, "").split(/\s*\|\s*/);
  if (cells.length !== HEADER.length - POLICY_COLUMNS.count) return row;
  cells.splice(POLICY_COLUMNS.at, 0, ...Array<string>(POLICY_COLUMNS.count).fill("–"));
  return `| ${cells.join(" | ")} |`;
}
