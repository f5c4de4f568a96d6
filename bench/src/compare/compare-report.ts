import { median } from "../measure/median.js";
import type { ChildResult } from "./child.js";
import type { Side } from "./run-child.js";

/** One child's totals, with where and when it ran. */
export interface Sample extends ChildResult {
  workload: string;
  side: Side;
  round: number;
}

/** One workload's verdict: medians over rounds per side, and new/base. */
export interface CompareRow {
  workload: string;
  baseCpuUs: number;
  newCpuUs: number;
  /** Median new CPU per step / median base CPU per step: what the gate judges. */
  cpuRatio: number;
  /** Lowest and highest new/base CPU ratio of a single round: how noisy the pairs were. */
  cpuRatioRange: [number, number];
  baseWallUs: number;
  newWallUs: number;
  wallRatio: number;
  /**
   * Median share of the CPU spent outside the main thread (V8 compiling and collecting in the
   * background), both sides; `null` where the children could not tell (not Linux). A large
   * share means the children time the JIT's warm-up more than the engine.
   */
  backgroundShare: number | null;
  regressed: boolean;
}

/** What the report's header says about the run. */
export interface CompareHeader {
  base: string;
  next: string;
  rounds: number;
  threshold: number;
  /** The workloads past the threshold after `rounds`, measured again for this many more. */
  remeasured: { workloads: string[]; rounds: number };
}

const perStepUs = (sample: Sample, field: "cpuMs" | "wallMs") =>
  (sample[field] * 1000) / sample.steps;

/** Medians per workload and side over the rounds, the ratios, and whether CPU regressed. */
export function summarize(workloads: string[], samples: Sample[], threshold: number): CompareRow[] {
  return workloads.map((workload) => {
    const of = (side: Side) => samples.filter((s) => s.workload === workload && s.side === side);
    const [base, next] = [of("base"), of("new")];
    const baseCpuUs = median(base.map((s) => perStepUs(s, "cpuMs")));
    const newCpuUs = median(next.map((s) => perStepUs(s, "cpuMs")));
    const baseWallUs = median(base.map((s) => perStepUs(s, "wallMs")));
    const newWallUs = median(next.map((s) => perStepUs(s, "wallMs")));
    const roundRatios = next.map((n) => {
      const b = base.find((s) => s.round === n.round);
      return b ? perStepUs(n, "cpuMs") / perStepUs(b, "cpuMs") : Number.NaN;
    });
    const cpuRatio = newCpuUs / baseCpuUs;
    const shares = [...base, ...next]
      .filter((s) => s.mainThreadCpuMs !== undefined)
      .map((s) => 1 - s.mainThreadCpuMs! / s.cpuMs);
    return {
      workload,
      baseCpuUs,
      newCpuUs,
      cpuRatio,
      cpuRatioRange: [Math.min(...roundRatios), Math.max(...roundRatios)],
      baseWallUs,
      newWallUs,
      wallRatio: newWallUs / baseWallUs,
      backgroundShare: shares.length > 0 ? median(shares) : null,
      regressed: cpuRatio > threshold,
    };
  });
}

/** The compare as a markdown table (the same text goes to stdout and the report file). */
export function renderCompare(rows: CompareRow[], header: CompareHeader): string {
  const us = (value: number) => value.toFixed(1);
  const x = (value: number) => `${value.toFixed(2)}x`;
  const share = (value: number | null) => (value === null ? "–" : `${Math.round(value * 100)}%`);
  const lines = [
    "# bench:compare",
    "",
    `Base: ${header.base}. New: ${header.next}. ${header.rounds} round(s), base and new interleaved;`,
    `medians over rounds, per node step (HTTP: per request). CPU is the child process's user +`,
    `system time, all threads; *other threads* is the median share of it outside the main thread`,
    `(V8's compiler and GC helpers). Gate: CPU new/base above ${x(header.threshold)} fails.`,
    "",
    "| workload | CPU µs/step base | CPU µs/step new | CPU new/base | per-round range | other threads | wall µs/step base | wall µs/step new | wall new/base | gate |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ...rows.map(
      (r) =>
        `| ${r.workload} | ${us(r.baseCpuUs)} | ${us(r.newCpuUs)} | ${x(r.cpuRatio)} | ` +
        `${r.cpuRatioRange.map((v) => v.toFixed(2)).join("–")} | ${share(r.backgroundShare)} | ` +
        `${us(r.baseWallUs)} | ` +
        `${us(r.newWallUs)} | ${x(r.wallRatio)} | ${r.regressed ? "**REGRESSED**" : "ok"} |`,
    ),
    "",
  ];
  const { workloads, rounds } = header.remeasured;
  if (workloads.length > 0) {
    lines.push(
      `Past the threshold after ${header.rounds} round(s), measured again for ${rounds} more ` +
        `and judged on all ${header.rounds + rounds}: ${workloads.join(", ")}.`,
      "",
    );
  }
  return `${lines.join("\n")}\n`;
}
