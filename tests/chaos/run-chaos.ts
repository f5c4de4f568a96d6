/**
 * `npm run chaos -- --kills 1000 --store sqlite|postgres [--seed 1] [--lanes 2]
 * [--max-minutes N] [--results tests/chaos/results.md]`
 *
 * SIGKILLs and SIGSTOPs agent worker processes at random moments, with two and three of them on
 * a thread at once, until `--kills` processes died (on both stores when `--store` is not given),
 * checks the crash suite's invariants after every wave, prints a table and writes it to the
 * results file (the rows of the stores run now replace theirs). Exits 1 when an invariant broke.
 */
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { STORE_KINDS, storeLabel, type StoreKind } from "../support/store-spec.js";
import { runChaos } from "./chaos-run.js";
import { details, held, markdownTable, type ChaosTally } from "./chaos-tally.js";

const { values } = parseArgs({
  options: {
    kills: { type: "string", default: "1000" },
    store: { type: "string" },
    seed: { type: "string", default: "1" },
    lanes: { type: "string", default: "2" },
    "max-minutes": { type: "string" },
    results: { type: "string", default: "tests/chaos/results.md" },
  },
});
const stores = values.store === undefined ? STORE_KINDS : [values.store as StoreKind];
if (!stores.every((store) => STORE_KINDS.includes(store))) {
  throw new Error(`--store must be one of ${STORE_KINDS.join(", ")}`);
}
const kills = Number(values.kills);
const seed = Number(values.seed);
const maxMinutes = values["max-minutes"] === undefined ? undefined : Number(values["max-minutes"]);

const tallies: ChaosTally[] = [];
for (const store of stores) {
  console.log(`[${store}] chaos: ${kills} kills, seed ${seed}, lanes ${values.lanes}`);
  tallies.push(
    await runChaos({
      store,
      kills,
      seed,
      lanes: Number(values.lanes),
      ...(maxMinutes === undefined ? {} : { maxMinutes }),
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
writeResults(values.results, tallies, command);
const short = tallies.filter((t) => t.kills < kills);
if (short.length > 0)
  console.log(`\nstopped early (--max-minutes) on ${short.map((t) => t.store)}`);
process.exit(tallies.every(held) && tallies.every((t) => t.kills > 0) ? 0 : 1);

/**
 * Writes the table and each store's details to `path`, keeping the rows and details of stores
 * not run this time: each store's part sits between markers of its own.
 */
function writeResults(path: string, fresh: ChaosTally[], command: string): void {
  const old = existsSync(path) ? readFileSync(path, "utf8") : "";
  const parts = new Map<StoreKind, string>();
  const rows = new Map<StoreKind, string>();
  for (const store of STORE_KINDS) {
    const part = new RegExp(`<!-- ${store} -->\\n([\\s\\S]*?)<!-- /${store} -->`).exec(old);
    const row = new RegExp(`<!-- row ${store}: (.*) -->`).exec(old);
    if (part?.[1] && row?.[1]) {
      // The heading is written below, so a kept part drops its own (and any copies an older
      // version of this function left, which doubled it on every run).
      parts.set(store, part[1].replace(/^(\s*### .*\n)+\s*/, ""));
      rows.set(store, row[1]);
    }
  }
  for (const tally of fresh) {
    const when = new Date().toISOString().slice(0, 16).replace("T", " ");
    parts.set(tally.store, `\`${command}\` (${when} UTC)\n\n${details(tally)}\n`);
    rows.set(tally.store, markdownTable([tally]).split("\n")[2]!);
  }
  const stores = STORE_KINDS.filter((store) => parts.has(store));
  const table = markdownTable([])
    .split("\n")
    .concat(stores.map((s) => rows.get(s)!));
  const text = [
    "# Chaos run results",
    "",
    "Written by `npm run chaos` (tests/chaos/run-chaos.ts); every column but the in-doubt count",
    "must be 0.",
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
  writeFileSync(path, text);
}
