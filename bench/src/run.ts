import { writeFileSync } from "node:fs";
import os from "node:os";
import { runBare } from "./bare-loop.js";
import { buildApp, runOnce, type Workload } from "./react-loop.js";

/**
 * `npm run bench [-- --quick]`: engine overhead per node step on the in-memory store, for a
 * 50-turn ReAct loop with 1 and 4 trivial tools per turn. Median over repeated runs after a
 * warm-up; no assertions, figures only. Writes bench/results.md and bench/results.json
 * (`--quick`: bench/results-quick.*, which git ignores).
 */
const quick = process.argv.includes("--quick");
const repeats = quick ? 5 : 40;
const warmup = quick ? 2 : 10;

interface Row {
  store: string;
  turns: number;
  toolsPerTurn: number;
  steps: number;
  msPerStep: number;
  msPerToolCall: number;
  /** The same loop with no runtime, measured in the same process, interleaved. */
  floorMsPerStep: number;
  runs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function measure(workload: Workload): Promise<Row> {
  const app = buildApp(workload);
  const perStep: number[] = [];
  const floorPerStep: number[] = [];
  let steps = 0;
  // Runtime and floor runs alternate, so machine noise falls on both alike.
  for (let i = 0; i < warmup + repeats; i++) {
    const run = await runOnce(app, workload, `bench-${workload.toolsPerTurn}-${i}`);
    const bare = await runBare(workload);
    steps = run.steps;
    if (i < warmup) continue;
    perStep.push(run.ms / run.steps);
    floorPerStep.push(bare.ms / bare.steps);
  }
  const msPerStep = median(perStep);
  return {
    store: "memory",
    ...workload,
    steps,
    msPerStep,
    // A turn is two steps (model, tools); this spreads the tools step over its calls.
    msPerToolCall: (msPerStep * 2) / workload.toolsPerTurn,
    floorMsPerStep: median(floorPerStep),
    runs: repeats,
  };
}

const rows: Row[] = [];
for (const toolsPerTurn of [1, 4]) rows.push(await measure({ turns: 50, toolsPerTurn }));

const machine = `${os.cpus()[0]?.model ?? "cpu"} x${os.cpus().length}, Node ${process.version}`;
const table = [
  `# tenxgraph benchmark${quick ? " (quick)" : ""}`,
  "",
  `Machine: ${machine}. Median of ${repeats} runs after ${warmup} warm-up runs.`,
  "",
  "| store | turns | tools/turn | steps/run | ms per step | ms per tool call | floor ms per step | overhead ms per step | tenxgraph / floor |",
  "|---|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.store} | ${r.turns} | ${r.toolsPerTurn} | ${r.steps} | ${r.msPerStep.toFixed(4)} | ${r.msPerToolCall.toFixed(4)} | ${r.floorMsPerStep.toFixed(4)} | ${(r.msPerStep - r.floorMsPerStep).toFixed(4)} | ${(r.msPerStep / r.floorMsPerStep).toFixed(1)}x |`,
  ),
  "",
  "ms per tool call spreads the tools step over its calls (a turn is a model step and a tools step).",
  "The floor is the same loop with no runtime (no store, ledger, deadline, event or copy).",
  "",
].join("\n");
const out = new URL("../", import.meta.url);
// A quick run is a smoke check; it must not replace the committed figures.
const name = quick ? "results-quick" : "results";
writeFileSync(new URL(`${name}.md`, out), table);
writeFileSync(
  new URL(`${name}.json`, out),
  JSON.stringify({ machine, quick, rows }, null, 2) + "\n",
);
console.log(table);
