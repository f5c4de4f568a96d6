import { Message } from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { expect } from "vitest";
import type { TeamPlan } from "./agent-params.js";
import { readThread, type CrashScene, type StoredThread } from "./crash-scene.js";
import { checkEffects, checkRecordsFinal } from "./ledger-checks.js";
import { readEffects } from "./side-effect-log.js";
import { expectedReports, teamAnswer, type TeamState } from "./team-agent.js";
import { checkTranscript } from "./transcript-checks.js";
import { checkVersions } from "./version-checks.js";
import { breaks } from "./thread-invariants.js";
import { unsurfacedInDoubt } from "./in-doubt-report.js";
import { teamCalls } from "./team-plan.js";

/** The team's threads as stored: the parent's, and each worker's child thread by id. */
export interface StoredTeam {
  parent: StoredThread;
  children: Map<string, StoredThread>;
}

/**
 * Reads the team as committed. Each child is given the effects of the calls in its own ledger;
 * an effect in no child's ledger stays in the parent's list, where the checks find it.
 */
export async function readTeam(scene: CrashScene): Promise<StoredTeam> {
  const effects = readEffects(scene.effectsPath);
  return scene.inspect(async (store) => {
    const children = new Map<string, StoredThread>();
    for (const threadId of await childThreadIds(store, scene.threadId)) {
      const child = await readThread(store, threadId, effects);
      const keys = new Set(child.ledger.map((entry) => entry.key));
      children.set(threadId, { ...child, effects: effects.filter((e) => keys.has(e.ledgerKey)) });
    }
    const owned = new Set([...children.values()].flatMap((c) => c.effects));
    const orphans = effects.filter((effect) => !owned.has(effect));
    return { parent: await readThread(store, scene.threadId, orphans), children };
  });
}

/**
 * The threads the parent's subgraph nodes ran their workers on: listed under the parent (an
 * unfiltered listing leaves child threads out).
 */
async function childThreadIds(store: Checkpointer, parentThreadId: string): Promise<string[]> {
  const threads = await store.listThreads({ parentThreadId, limit: 1000 });
  return threads.map((thread) => thread.threadId).sort();
}

/** What the team checks need to know beyond the store. */
export interface TeamCheckOptions {
  plan: TeamPlan;
  /** The last run completed the parent: every worker must be done, every call recorded. */
  finished: boolean;
  /** Printed in front of every failure (the seed and the run), so it can be replayed. */
  label: string;
}

/**
 * The crash suite's invariants, on every thread of the team, after any process ended: the
 * parent's versions only grow, one per committed write, and its reports hold each worker's
 * once (no update lost or applied twice); each child's transcript only grows and answers each
 * call once, as its ledger recorded; no recorded call ran again, no attempt ran twice; every
 * effect belongs to a call of some child's ledger. Returns what was read.
 */
export async function checkTeamInvariants(
  scene: CrashScene,
  previous: StoredTeam | null,
  options: TeamCheckOptions,
): Promise<StoredTeam> {
  const team = await readTeam(scene);
  const at = `${options.label} (after run ${scene.runs.length})`;
  const policies = scene.runs.at(-1)?.params.policies ?? {};
  breaks("lost_update", () => {
    checkVersions(scene, team.parent, at);
    const reports = reportsOf(team.parent);
    expect(reports.length - new Set(reports).size, `${at}: reports merged twice`).toBe(0);
  });
  breaks("lost_message", () => {
    checkTranscript(team.parent, previous?.parent ?? null, at, options.finished);
    for (const threadId of previous?.children.keys() ?? []) {
      expect(team.children.has(threadId), `${at}: child thread ${threadId} lost`).toBe(true);
    }
  });
  breaks("duplicate", () =>
    expect(
      team.parent.effects.map((e) => `${e.tool} ${e.ledgerKey}`),
      `${at}: effects of no worker's call`,
    ).toEqual([]),
  );
  for (const [threadId, child] of team.children) {
    const before = previous?.children.get(threadId) ?? null;
    const where = `${at}, child ${threadId}`;
    const done = child.checkpoint?.status === "completed";
    breaks("duplicate", () => checkRecordsFinal(child, before, where));
    breaks("lost_message", () => checkTranscript(child, before, where, done));
    breaks("duplicate", () => checkEffects(child, policies, where));
  }
  if (options.finished) breaks("finish", () => checkFinished(team, options.plan, at));
  return team;
}

/** The in-doubt calls of the team's workers that no run warned of (see unsurfacedInDoubt). */
export function unsurfacedInTeam(scene: CrashScene, team: StoredTeam): string[] {
  return [...team.children.values()].flatMap((child) => unsurfacedInDoubt(scene, child));
}

/** A completed team: every worker completed once, every call recorded, each report once. */
function checkFinished(team: StoredTeam, plan: TeamPlan, at: string): void {
  const { checkpoint, messages } = team.parent;
  expect(checkpoint?.status, `${at}: parent status`).toBe("completed");
  expect(checkpoint?.currentNode, `${at}: parent's current node`).toBeNull();
  const expected = expectedReports(plan);
  expect(reportsOf(team.parent), `${at}: the workers' reports`).toEqual(expected);
  const answer = messages.at(-1);
  expect(answer && Message.text(answer), `${at}: the answer`).toBe(teamAnswer(expected));
  expect(team.children.size, `${at}: one child thread per Send`).toBe(plan.billing.length + 1);
  const calls = teamCalls(plan);
  const entries = [...team.children.values()].flatMap((child) => child.ledger);
  expect(entries, `${at}: one ledger entry per call`).toHaveLength(calls);
  for (const [threadId, child] of team.children) {
    expect(child.checkpoint?.status, `${at}: child ${threadId}`).toBe("completed");
    expect(
      child.ledger.filter((e) => e.status !== "completed").map((e) => `${e.key}: ${e.status}`),
      `${at}: child ${threadId}: ledger entries not completed`,
    ).toEqual([]);
  }
}

/** The reports merged into the parent's state so far. */
function reportsOf(parent: StoredThread): string[] {
  const values = parent.checkpoint?.values as Partial<TeamState> | undefined;
  return values?.reports ?? [];
}
