import { ERROR_CODES, Message } from "@tenxgraph/core";
import { decodeEnvelope } from "@tenxgraph/core/testing";
import { type LedgerEntry } from "@tenxgraph/core/storage";
import { expect } from "vitest";
import type { Effect, PolicyName, ToolName } from "./agent-params.js";
import type { CrashScene, StoredThread, WorkerRun } from "./crash-scene.js";
import { version1Key } from "./graph-versions.js";

/**
 * A recorded call is final: a later process replays it and never runs, claims or rewrites it,
 * so its entry and its effects stay exactly as they were.
 */
export function checkRecordsFinal(
  stored: StoredThread,
  previous: StoredThread | null,
  at: string,
): void {
  for (const before of previous?.ledger ?? []) {
    if (before.status !== "completed") continue;
    const now = stored.ledger.find((e) => e.key === before.key);
    const { status, attempt, result } = before;
    expect(now, `${at}: recorded call ${before.key} changed`).toMatchObject({
      status,
      attempt,
      result,
    });
    const count = (effects: Effect[]) => effects.filter((e) => e.ledgerKey === before.key).length;
    expect(count(stored.effects), `${at}: recorded call ${before.key} ran again`).toBe(
      count(previous!.effects),
    );
  }
}

/**
 * What `stream` told its consumer matches the ledger: a call is reported `replayed` exactly
 * when its entry was settled by another run (an earlier or a concurrent process), not claimed
 * by this one; a run that died may also report as run a call another run settled after it.
 * Checked for each run of the last wave.
 */
export function checkStreamedReplays(scene: CrashScene, stored: StoredThread, at: string): void {
  const wave = scene.runs.at(-1)?.wave;
  for (const run of scene.runs.filter((r) => r.wave === wave)) checkReplays(run, stored, at);
}

function checkReplays(run: WorkerRun, stored: StoredThread, at: string): void {
  if (run.params.via !== "stream") return;
  const events = run.messages.flatMap((m) =>
    m.type === "event" ? [m.event as StreamedEvent] : [],
  );
  const runId = events.find((e) => e.type === "run_start")?.runId;
  const died = run.done === undefined;
  for (const event of events.filter((e) => e.type === "tool_result")) {
    const entry = stored.ledger.find((e) => e.key === version1Key(event.key ?? ""));
    const settledByAnother = entry?.ownerRunId !== runId;
    // A run that died may have run a call whose result rode in a step write the kill took
    // (ledger protocol v2): it ran the tool, yet the entry went on to the run that retried it.
    if (died && event.replayed === false && settledByAnother) continue;
    expect(event.replayed, `${at}: tool_result.replayed of ${event.key}`).toBe(settledByAnother);
  }
}

/** The fields of a reported stream event these checks read. */
interface StreamedEvent {
  type: string;
  runId?: string;
  key?: string;
  replayed?: boolean;
}

/**
 * The side-effect log agrees with the ledger: no attempt took effect twice, nothing ran after
 * it was recorded, a recorded tool result has its effect, and "fail" and `reconcile` never
 * act twice.
 */
export function checkEffects(
  stored: StoredThread,
  policies: Partial<Record<ToolName, PolicyName>>,
  at: string,
): void {
  const entries = new Map(stored.ledger.map((e) => [e.key, e]));
  // One fact, one entry: a charge recorded under charge_card's key and under its version 2
  // name's (read back as charge_card's) was claimed twice across a deploy.
  expect(entries.size, `${at}: ledger entries sharing a key`).toBe(stored.ledger.length);
  const attempts = new Set<string>();
  for (const effect of stored.effects) {
    const id = `${effect.ledgerKey} attempt ${effect.attempt}`;
    expect(attempts.has(id), `${at}: ${id} took effect twice`).toBe(false);
    attempts.add(id);
    const entry = entries.get(effect.ledgerKey);
    expect(entry, `${at}: effect of ${id} has no ledger entry`).toBeDefined();
    expect(effect.attempt, `${at}: effect of ${id} vs ledger attempt`).toBeLessThanOrEqual(
      entry?.attempt ?? 0,
    );
  }
  for (const entry of stored.ledger) {
    const mine = stored.effects.filter((e) => e.ledgerKey === entry.key);
    if (entry.status === "completed") checkRecorded(entry, mine, at);
    const policy = policies[entry.toolName as ToolName] ?? "retry";
    if (policy === "fail" || policy === "reconcile") {
      // These policies never run an in-doubt call again once it may have acted.
      expect(
        mine.length,
        `${at}: effects of ${entry.key} (onInDoubt ${policy})`,
      ).toBeLessThanOrEqual(1);
    }
    if (entry.status === "completed" && recordedText(entry).startsWith("reconciled:")) {
      // reconcile() answered from the outside world: the effect it saw must be there.
      expect(mine.length, `${at}: effects of reconciled ${entry.key}`).toBe(1);
    }
  }
}

/**
 * A recorded call ran at its recorded attempt exactly when its result came from the tool; a
 * timeout recorded as the result says only that the tool did not answer in time, so its
 * attempt may or may not have taken effect.
 */
function checkRecorded(entry: LedgerEntry & { status: "completed" }, mine: Effect[], at: string) {
  expect(
    mine.filter((e) => e.attempt > entry.attempt).length,
    `${at}: ${entry.key} ran again after it was recorded`,
  ).toBe(0);
  const ranNow = mine.filter((e) => e.attempt === entry.attempt).length;
  const label = `${at}: effects of ${entry.key} at its recorded attempt ${entry.attempt}`;
  const source = resultSource(entry);
  if (source === "timeout") expect(ranNow, label).toBeLessThanOrEqual(1);
  else expect(ranNow, label).toBe(source === "tool" ? 1 : 0);
}

/**
 * Where a recorded result came from: what the tool returned, a timeout while it ran, or a
 * policy's or a human's answer (no run of the tool at that attempt).
 */
function resultSource(
  entry: LedgerEntry & { status: "completed" },
): "tool" | "timeout" | "not-the-tool" {
  const decoded = decodeEnvelope(entry.result, "any");
  if (!decoded) return "not-the-tool";
  if (decoded.errorCode === ERROR_CODES.NODE_TIMEOUT_002) return "timeout";
  const text = recordedText(entry);
  const answered =
    decoded.errorCode === "TOOL_IN_DOUBT_001" ||
    text.startsWith("reconciled:") ||
    text.startsWith("human:") ||
    text === "Charge declined";
  return answered ? "not-the-tool" : "tool";
}

function recordedText(entry: LedgerEntry & { status: "completed" }): string {
  const decoded = decodeEnvelope(entry.result, "any");
  return decoded ? Message.text(decoded.message) : "";
}
