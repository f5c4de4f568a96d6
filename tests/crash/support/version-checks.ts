import { expect } from "vitest";
import type { CrashScene, StoredThread, WorkerRun } from "./crash-scene.js";

/**
 * Versions only grow, one per committed write across all processes, and the stored version is
 * the last one written; `stream` reported the same versions.
 */
export function checkVersions(scene: CrashScene, stored: StoredThread, at: string): void {
  scene.runs.at(-1)!.versionAfter = stored.checkpoint?.version ?? 0;
  // Across processes, every committed write is the previous version plus one: none reused, none lost.
  let version = 0;
  for (const [i, run] of scene.runs.entries()) {
    for (const written of writtenVersions(run)) {
      expect(written, `${at}: version written by run ${i + 1}`).toBe(version + 1);
      version = written;
    }
    if (run.versionAfter === undefined) continue;
    // Killed from outside at any moment, a worker may have committed a write it had no time
    // to report; a worker that ended or killed itself at a fault point reported them all.
    const possible = killedAnytime(run) ? [version, version + 1] : [version];
    expect(possible, `${at}: stored version after run ${i + 1}`).toContain(run.versionAfter);
    version = run.versionAfter;
    if (run.params.via === "stream") checkStreamedVersions(run, at);
  }
  expect(stored.checkpoint?.version ?? 0, `${at}: stored version`).toBe(version);
}

function writtenVersions(run: WorkerRun): number[] {
  return run.messages.filter((m) => m.type === "write").map((m) => m.version as number);
}

function killedAnytime(run: WorkerRun): boolean {
  return run.params.outsideKillMs !== undefined && run.exit.signal === "SIGKILL";
}

/** The versions `stream` reported in its `state` events are the ones written, in order. */
function checkStreamedVersions(run: WorkerRun, at: string): void {
  const streamed = run.messages.flatMap((m) => {
    const event = m.event as { type: string; version?: number } | undefined;
    return m.type === "event" && event?.type === "state" ? [event.version] : [];
  });
  const written = writtenVersions(run);
  // An unreported write of a worker killed from outside may still have reached the stream.
  if (killedAnytime(run) && run.versionAfter! > (written.at(-1) ?? 0)) {
    written.push(run.versionAfter!);
  }
  // A killed consumer may not have passed on the last events yet; one that finished has all.
  const seen = run.done ? written : written.slice(0, streamed.length);
  expect(streamed, `${at}: versions in stream's state events vs writes`).toEqual(seen);
}
