import { expect } from "vitest";
import type { CrashScene, StoredThread } from "./crash-scene.js";
import { checkEffects, checkRecordsFinal, checkStreamedReplays } from "./ledger-checks.js";
import { checkTranscript } from "./transcript-checks.js";
import { checkVersions } from "./version-checks.js";

/** What the invariants need to know beyond the store. */
export interface CheckOptions {
  /** The last run completed the thread: every call must be answered and recorded. */
  finished: boolean;
  /** Printed in front of every failure, e.g. the seed and the run, so a failure can be replayed. */
  label?: string;
}

/**
 * Checks the invariants that must hold after any process ended, however it ended, and returns
 * what was read: versions only grow, one per committed write across all processes; the
 * transcript only grows, without duplicate or lost messages, each call answered at most once,
 * by what the ledger recorded; no call ran again after it was recorded, no attempt ran twice,
 * and the side-effect log agrees with the ledger.
 */
export async function checkInvariants(
  scene: CrashScene,
  previous: StoredThread | null,
  options: CheckOptions,
): Promise<StoredThread> {
  const stored = await scene.read();
  const at = `${options.label ?? scene.threadId} (after run ${scene.runs.length})`;
  checkVersions(scene, stored, at);
  checkStreamedReplays(scene, stored, at);
  checkRecordsFinal(stored, previous, at);
  checkTranscript(stored, previous, at, options.finished);
  checkEffects(stored, scene.runs.at(-1)?.params.policies ?? {}, at);
  if (options.finished) {
    expect(stored.checkpoint?.status, `${at}: thread status`).toBe("completed");
    expect(stored.checkpoint?.currentNode, `${at}: current node`).toBeNull();
    expect(
      stored.ledger.filter((e) => e.status !== "completed").map((e) => `${e.key}: ${e.status}`),
      `${at}: ledger entries not completed`,
    ).toEqual([]);
  }
  return stored;
}
