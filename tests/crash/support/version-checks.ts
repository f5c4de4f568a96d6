import { expect } from "vitest";
import type { CrashScene, StoredThread, WorkerRun } from "./crash-scene.js";

/**
 * Versions only grow, one per committed write across all processes, and the stored version is
 * the last one written; `stream` reported the same versions. Runs of one wave (started together
 * on the thread) may interleave their writes, but no version is acknowledged to two writers:
 * that would be an update lost.
 */
export function checkVersions(scene: CrashScene, stored: StoredThread, at: string): void {
  scene.runs.at(-1)!.versionAfter = stored.checkpoint?.version ?? 0;
  let version = 0;
  for (const wave of waves(scene.runs)) {
    const after = wave.find((run) => run.versionAfter !== undefined)?.versionAfter;
    checkWave(wave, version, after, at);
    for (const run of wave) if (run.params.via === "stream") checkStreamedVersions(run, at);
    if (after === undefined) continue;
    version = after;
  }
  expect(stored.checkpoint?.version ?? 0, `${at}: stored version`).toBe(version);
}

/**
 * The writes of one wave, from `before` (the stored version when it began) to `after` (once its
 * processes were gone; unknown while some still run): each run's own writes follow each other
 * (a run's next write is based on its last, or fails as stale), no version is written twice,
 * and every version in between was reported, except at most one per run killed from outside (it
 * may have committed a write it had no time to report: right after its last reported one).
 */
function checkWave(wave: WorkerRun[], before: number, after: number | undefined, at: string): void {
  const written: number[] = [];
  for (const run of wave) {
    const mine = writtenVersions(run);
    mine.forEach((v, i) => {
      const expected = i === 0 ? v : mine[i - 1]! + 1;
      expect(v, `${at}: versions written by run ${run.wave}/${run.params.via}`).toBe(expected);
    });
    written.push(...mine);
  }
  written.sort((a, b) => a - b);
  const twice = written.filter((v, i) => written[i - 1] === v);
  expect(twice, `${at}: versions acknowledged to two writers (a lost update)`).toEqual([]);
  expect(written[0] ?? before + 1, `${at}: first version written after ${before}`).toBeGreaterThan(
    before,
  );
  if (after === undefined) return;
  expect(after, `${at}: stored version after the wave vs its writes`).toBeGreaterThanOrEqual(
    written.at(-1) ?? before,
  );
  const unreported: number[] = [];
  for (let v = before + 1; v <= after; v++) if (!written.includes(v)) unreported.push(v);
  // Each gap is the last write of a run killed from outside, right after its last reported one.
  const mayHide = wave.filter(killedAnytime).map((run) => writtenVersions(run).at(-1) ?? null);
  for (const gap of unreported) {
    const hider = mayHide.findIndex((last) => last === null || last === gap - 1);
    expect(hider, `${at}: version ${gap} committed by no run that reported it`).not.toBe(-1);
    mayHide.splice(hider, 1);
  }
}

/** The runs grouped by wave, in the order the waves started. */
function waves(runs: readonly WorkerRun[]): WorkerRun[][] {
  const groups = new Map<string, WorkerRun[]>();
  for (const run of runs) groups.set(run.wave, [...(groups.get(run.wave) ?? []), run]);
  return [...groups.values()];
}

/** The versions `run` wrote to the scene's thread (not to the child threads of its subgraphs). */
function writtenVersions(run: WorkerRun): number[] {
  return run.messages
    .filter((m) => m.type === "write" && m.threadId === run.params.threadId)
    .map((m) => m.version as number);
}

/** Killed from outside at a moment of its own: possibly inside a store write it never reported. */
function killedAnytime(run: WorkerRun): boolean {
  const outside = run.params.outsideKillMs !== undefined || run.params.freeze !== undefined;
  return outside && run.exit.signal === "SIGKILL";
}

/** The versions `stream` reported in its `state` events are the ones written, in order. */
function checkStreamedVersions(run: WorkerRun, at: string): void {
  const streamed = run.messages.flatMap((m) => {
    const event = m.event as { type: string; version?: number } | undefined;
    return m.type === "event" && event?.type === "state" ? [event.version] : [];
  });
  const written = writtenVersions(run);
  // An unreported write of a worker killed from outside may still have reached the stream.
  if (killedAnytime(run) && streamed.length > written.length) {
    const last = written.at(-1);
    written.push(last === undefined ? streamed[0]! : last + 1);
  }
  // A killed consumer may not have passed on the last events yet; one that finished has all.
  const seen = run.done ? written : written.slice(0, streamed.length);
  expect(streamed, `${at}: versions in stream's state events vs writes`).toEqual(seen);
}
