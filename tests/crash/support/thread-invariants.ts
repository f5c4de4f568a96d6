import {
  Message,
  decodeEnvelope,
  ledgerKey,
  type AssistantMessage,
  type LedgerEntry,
  type ToolCall,
} from "@tenxgraph/core";
import { expect } from "vitest";
import type { Effect, PolicyName, ToolName } from "./agent-params.js";
import type { CrashScene, StoredThread, WorkerRun } from "./crash-scene.js";

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
  checkStreamedReplays(scene, previous, at);
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

function checkVersions(scene: CrashScene, stored: StoredThread, at: string): void {
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

/**
 * A recorded call is final: a later process replays it and never runs, claims or rewrites it,
 * so its entry and its effects stay exactly as they were.
 */
function checkRecordsFinal(stored: StoredThread, previous: StoredThread | null, at: string): void {
  for (const before of previous?.ledger ?? []) {
    if (before.status !== "completed") continue;
    const now = stored.ledger.find((e) => e.key === before.key);
    const { status, attempt, result } = before;
    expect(now, `${at}: recorded call ${before.key} changed`).toMatchObject({
      status,
      attempt,
      result,
    });
    const count = (effects: Effect[]) => effects.filter((e) => e.key === before.key).length;
    expect(count(stored.effects), `${at}: recorded call ${before.key} ran again`).toBe(
      count(previous!.effects),
    );
  }
}

/**
 * What `stream` told its consumer matches the ledger: a call is reported `replayed` exactly
 * when it had been recorded before this process started.
 */
function checkStreamedReplays(scene: CrashScene, previous: StoredThread | null, at: string): void {
  const run = scene.runs.at(-1);
  if (run?.params.via !== "stream") return;
  const recordedBefore = new Set(
    previous?.ledger.filter((e) => e.status === "completed").map((e) => e.key),
  );
  for (const message of run.messages) {
    const event = message.event as { type?: string; key?: string; replayed?: boolean } | undefined;
    if (message.type !== "event" || event?.type !== "tool_result") continue;
    expect(event.replayed, `${at}: tool_result.replayed of ${event.key}`).toBe(
      recordedBefore.has(event.key!),
    );
  }
}

function checkTranscript(
  stored: StoredThread,
  previous: StoredThread | null,
  at: string,
  finished: boolean,
): void {
  const { messages } = stored;
  const ids = messages.map((m) => m.id);
  expect(ids.length - new Set(ids).size, `${at}: duplicate message ids`).toBe(0);
  const before = previous?.messages ?? [];
  expect(messages.slice(0, before.length), `${at}: persisted messages changed or lost`).toEqual(
    before,
  );
  expect(stored.checkpoint?.messageCount ?? 0, `${at}: stored message count`).toBe(messages.length);
  const entries = new Map(stored.ledger.map((e) => [e.key, e]));
  messages.forEach((message, i) => {
    if (message.role === "assistant" && message.toolCalls?.length) {
      checkAnswers(messages, i, entries, at, finished);
    }
    if (message.role === "tool") {
      let issuer = i - 1;
      while (messages[issuer]?.role === "tool") issuer -= 1;
      const calls = (messages[issuer] as AssistantMessage | undefined)?.toolCalls ?? [];
      expect(
        calls.some((c) => c.id === message.toolCallId),
        `${at}: tool message ${message.id} answers no call of the message before it`,
      ).toBe(true);
    }
  });
  if (finished) {
    expect(
      messages.filter((m) => m.role === "user"),
      `${at}: user messages`,
    ).toHaveLength(1);
    const last = messages.at(-1);
    expect(
      last?.role === "assistant" && !last.toolCalls?.length,
      `${at}: ends with the answer`,
    ).toBe(true);
  }
}

/** Each call of the assistant message at `index` is answered once (or not yet), as recorded. */
function checkAnswers(
  messages: readonly Message[],
  index: number,
  entries: Map<string, LedgerEntry>,
  at: string,
  finished: boolean,
): void {
  const issuer = messages[index] as AssistantMessage;
  let end = index + 1;
  while (messages[end]?.role === "tool") end += 1;
  const answers = messages.slice(index + 1, end);
  // Tool messages are written together, after the tool node: all of them, or none yet.
  const answered = answers.length > 0 || end < messages.length || finished;
  expect(answers.length, `${at}: answers to ${issuer.id}`).toBe(
    answered ? issuer.toolCalls!.length : 0,
  );
  for (const call of issuer.toolCalls!) {
    const mine = answers.filter((m) => m.role === "tool" && m.toolCallId === call.id);
    expect(mine.length, `${at}: answers to call ${call.id} of ${issuer.id}`).toBe(answered ? 1 : 0);
    if (mine.length === 0) continue;
    const key = keyOf(issuer, call);
    const entry = entries.get(key);
    expect(entry?.status, `${at}: ledger entry of answered call ${key}`).toBe("completed");
    // The answer is the recorded message itself (same id), whether it was replayed or not.
    const recorded = entry?.status === "completed" ? decodeEnvelope(entry.result, call.id) : null;
    expect(recorded?.message, `${at}: answer to ${key} vs the ledger`).toEqual(mine[0]);
  }
}

/** The ledger key of a call: charge_card's domain key, else `<message id>:<call id>`. */
export function keyOf(issuer: AssistantMessage, call: ToolCall): string {
  if (call.name === "charge_card") {
    return `order-${(JSON.parse(call.arguments) as { order_id: string }).order_id}-charge`;
  }
  return ledgerKey(issuer.id, call.id)!;
}

function checkEffects(
  stored: StoredThread,
  policies: Partial<Record<ToolName, PolicyName>>,
  at: string,
): void {
  const entries = new Map(stored.ledger.map((e) => [e.key, e]));
  const attempts = new Set<string>();
  for (const effect of stored.effects) {
    const id = `${effect.key} attempt ${effect.attempt}`;
    expect(attempts.has(id), `${at}: ${id} took effect twice`).toBe(false);
    attempts.add(id);
    const entry = entries.get(effect.key);
    expect(entry, `${at}: effect of ${id} has no ledger entry`).toBeDefined();
    expect(effect.attempt, `${at}: effect of ${id} vs ledger attempt`).toBeLessThanOrEqual(
      entry?.attempt ?? 0,
    );
  }
  for (const entry of stored.ledger) {
    const mine = stored.effects.filter((e) => e.key === entry.key);
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

/** A recorded call ran at its recorded attempt exactly when its result came from the tool. */
function checkRecorded(entry: LedgerEntry & { status: "completed" }, mine: Effect[], at: string) {
  expect(
    mine.filter((e) => e.attempt > entry.attempt).length,
    `${at}: ${entry.key} ran again after it was recorded`,
  ).toBe(0);
  const ranNow = mine.filter((e) => e.attempt === entry.attempt).length;
  expect(ranNow, `${at}: effects of ${entry.key} at its recorded attempt ${entry.attempt}`).toBe(
    fromTool(entry) ? 1 : 0,
  );
}

/** Whether a recorded result is what the tool returned (not a policy's or a human's answer). */
export function fromTool(entry: LedgerEntry & { status: "completed" }): boolean {
  const decoded = decodeEnvelope(entry.result, "any");
  if (!decoded) return false;
  const text = recordedText(entry);
  return (
    decoded.errorCode !== "TOOL_IN_DOUBT_001" &&
    !text.startsWith("reconciled:") &&
    !text.startsWith("human:") &&
    text !== "Charge declined"
  );
}

function recordedText(entry: LedgerEntry & { status: "completed" }): string {
  const decoded = decodeEnvelope(entry.result, "any");
  return decoded ? Message.text(decoded.message) : "";
}
