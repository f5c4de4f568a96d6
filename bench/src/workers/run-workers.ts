import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { BenchResults } from "../report/bench-results.js";
import { renderReport } from "../report/render-report.js";
import { renderWorkers } from "../report/render-workers.js";
import { measureWorkers } from "./measure-workers.js";
import { workersPlan } from "./workers-plan.js";

/**
 * `npm run bench:workers [-- --quick]`: only the "many workers" part of the bench (about 3
 * minutes; `--quick` under a minute). Prints its section; a full run also puts its figures into
 * bench/results.json (as `workers`, the other parts' figures kept as they were) and renders
 * bench/results.md again from it. `--quick` writes nothing.
 */
const quick = process.argv.includes("--quick");
const results = await measureWorkers(workersPlan(quick));
console.log(renderWorkers(results).join("\n"));
if (!quick) {
  const out = new URL("../../", import.meta.url);
  const json = new URL("results.json", out);
  if (existsSync(json)) {
    const all = JSON.parse(readFileSync(json, "utf8")) as BenchResults;
    all.workers = results;
    writeFileSync(json, JSON.stringify(all, null, 2) + "\n");
    writeFileSync(new URL("results.md", out), renderReport(all));
    console.error("bench workers: figures written to bench/results.json and bench/results.md");
  }
}
