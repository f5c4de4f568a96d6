import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readBaselineRef, resolveCommit } from "./base-tree.js";
import { renderCompare, summarize, type Sample } from "./compare-report.js";

/** Samples of one workload: per round, base and new CPU µs per step (100 steps each). */
function samples(workload: string, pairs: Array<[number, number]>): Sample[] {
  return pairs.flatMap(([base, next], round) => [
    { workload, side: "base", round, steps: 100, cpuMs: base / 10, wallMs: base / 10 },
    { workload, side: "new", round, steps: 100, cpuMs: next / 10, wallMs: next / 10 },
  ]);
}

describe("bench:compare verdict", () => {
  it("flags a workload whose median CPU per step grew past the threshold, and only that one", () => {
    const rows = summarize(
      ["steady", "slower"],
      [
        ...samples("steady", [
          [100, 104],
          [100, 180], // one noisy round does not move the median
          [100, 98],
        ]),
        ...samples("slower", [
          [100, 130],
          [100, 128],
          [100, 140],
        ]),
      ],
      1.25,
    );
    expect(rows.map((r) => [r.workload, r.regressed])).toEqual([
      ["steady", false],
      ["slower", true],
    ]);
    expect(rows[1]!.cpuRatio).toBeCloseTo(1.3);
    expect(rows[0]!.cpuRatioRange).toEqual([0.98, 1.8]);
    const remeasured = { workloads: [], rounds: 4 };
    const header = { base: "b", next: "n", rounds: 3, threshold: 1.25, remeasured };
    expect(renderCompare(rows, header)).toContain("| slower | 100.0 | 130.0 | 1.30x |");
  });

  it("judges a workload measured again on all its rounds: noise passes, a slowdown fails", () => {
    // CI's quick run once had 3 rounds of a short workload at 1.27x, 1.53x and 1.10x.
    const quick: Array<[number, number]> = [
      [100, 127],
      [100, 153],
      [100, 110],
    ];
    const noise = summarize(
      ["noisy"],
      samples("noisy", [...quick, [100, 101], [100, 97], [100, 104], [100, 99]]),
      1.25,
    );
    expect(noise[0]!.regressed).toBe(false);
    const slowdown = summarize(
      ["slower"],
      samples("slower", [...quick, [100, 131], [100, 128], [100, 135], [100, 129]]),
      1.25,
    );
    expect(slowdown[0]!.regressed).toBe(true);
    const header = {
      base: "b",
      next: "n",
      rounds: 3,
      threshold: 1.25,
      remeasured: { workloads: ["slower"], rounds: 4 },
    };
    expect(renderCompare(slowdown, header)).toContain(
      "Past the threshold after 3 round(s), measured again for 4 more and judged on all 7: slower.",
    );
  });

  it("gives the share of CPU outside the main thread, when the children could tell", () => {
    const measured = samples("warm", [
      [100, 100],
      [100, 100],
    ]).map((sample, i) => ({ ...sample, mainThreadCpuMs: sample.cpuMs * (i < 2 ? 0.9 : 0.7) }));
    const [row] = summarize(["warm"], measured, 1.25);
    expect(row!.backgroundShare).toBeCloseTo(0.2);
    const [unknown] = summarize(["any"], samples("any", [[100, 100]]), 1.25);
    expect(unknown!.backgroundShare).toBeNull();
    const header = {
      base: "b",
      next: "n",
      rounds: 2,
      threshold: 1.25,
      remeasured: { workloads: [], rounds: 4 },
    };
    expect(renderCompare([row!], header)).toContain("| 1.00–1.00 | 20% | 100.0 |");
    expect(renderCompare([unknown!], header)).toContain("| 1.00–1.00 | – | 100.0 |");
  });

  it("passes a ratio exactly at the threshold", () => {
    const [row] = summarize(["edge"], samples("edge", [[100, 125]]), 1.25);
    expect(row!.regressed).toBe(false);
  });
});

describe("bench/baseline-ref", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("names its commit on the first line that is not a comment", () => {
    const root = mkdtempSync(join(tmpdir(), "tenxgraph-baseline-"));
    dirs.push(root);
    mkdirSync(join(root, "bench"));
    writeFileSync(join(root, "bench", "baseline-ref"), "# why\n\n  abc123  \nignored\n");
    expect(readBaselineRef(root)).toBe("abc123");
    writeFileSync(join(root, "bench", "baseline-ref"), "# only a comment\n");
    expect(() => readBaselineRef(root)).toThrow(/names no commit/);
  });

  it("in this repository names a commit that exists", () => {
    const repoRoot = resolve(import.meta.dirname, "../../..");
    expect(resolveCommit(repoRoot, readBaselineRef(repoRoot))).toMatch(/^[0-9a-f]{40}$/);
  });
});
