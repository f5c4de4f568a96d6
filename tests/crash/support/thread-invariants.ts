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
 * Which invariant a failed check broke, set as `invariant` on the error it throws, so the chaos
 * run can count breaks by kind: a version acknowledged twice or lost (`lost_update`), a recorded
 * call or an attempt that acted again (`duplicate`), a message lost, changed or doubled
 * (`lost_message`), a stream that misreported replays (`replay_report`), a thread that ended
 * unfinished (`finish`).
 */
export type InvariantKind =
  "lost_update" | "replay_report" | "duplicate" | "lost_message" | "finish";

/** The invariant a failure of {@link checkInvariants} broke, if it was one. */
export function brokenInvariant(error: unknown): InvariantKind | undefined {
  return (error as { invariant?: InvariantKind } | null)?.invariant;
}

/**
 * Checks the invariants that must hold after any process ended, however it ended, and returns
 * what was read: versions only grow, one per committed write across all processes; the
 * transcript only grows, without duplicate or lost messages, each call answered at most once,
 * by what the ledger recorded; no call ran again after it was recorded, no attempt ran twice,
 * and the side-effect log agrees with the ledger. Call it once no process of the scene runs.
 */
export async function checkInvariants(
  scene: CrashScene,
  previous: StoredThread | null,
  options: CheckOptions,
): Promise<StoredThread> {
  const stored = await scene.read();
  const at = `${options.label ?? scene.threadId} (after run ${scene.runs.length})`;
  const policies = scene.runs.at(-1)?.params.policies ?? {};
  breaks("lost_update", () => checkVersions(scene, stored, at));
  breaks("replay_report", () => checkStreamedReplays(scene, stored, at));
  breaks("duplicate", () => checkRecordsFinal(stored, previous, at));
  breaks("lost_message", () => checkTranscript(stored, previous, at, options.finished));
  breaks("duplicate", () => checkEffects(stored, policies, at));
  if (options.finished) {
    breaks("finish", () => {
      expect(stored.checkpoint?.status, `${at}: thread status`).toBe("completed");
      expect(stored.checkpoint?.currentNode, `${at}: current node`).toBeNull();
      expect(
        stored.ledger.filter((e) => e.status !== "completed").map((e) => `${e.key}: ${e.status}`),
        `${at}: ledger entries not completed`,
      ).toEqual([]);
    });
  }
  return stored;
}

/** Runs `check`, marking what it throws as a break of `invariant`. */
export function breaks(invariant: InvariantKind, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (typeof error === "object" && error !== null) Object.assign(error, { invariant });
    throw error;
  }
}
