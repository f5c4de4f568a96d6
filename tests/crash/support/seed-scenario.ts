import type { LedgerEntry } from "@tenxgraph/core/storage";
import type { ToolMessage } from "@tenxgraph/core";
import { expect } from "vitest";
import type { StoreKind } from "../../support/store-spec.js";
import type { WorkerMessage } from "../../support/worker-process.js";
import type { AgentParams, KillPlan, PlannedCall, ToolName } from "./agent-params.js";
import { CrashScene, type SceneOptions, type StoredThread, type WorkerRun } from "./crash-scene.js";
import { checkInvariants } from "./thread-invariants.js";

/** The seed's order. */
export const ORDER = "4821";
/** The three calls the model asks for in one message. */
const SEED_CALLS: PlannedCall[] = [
  { name: "lookup_order", args: { order_id: ORDER } },
  { name: "charge_card", args: { order_id: ORDER, amount_cents: 4200 } },
  { name: "send_receipt", args: { order_id: ORDER } },
];
const SEED_ANSWER = "Order 4821 is charged and the receipt is on its way.";
/** The user's message that starts the turn. */
export const SEED_REQUEST = "charge order 4821 and email me the receipt";
/** charge_card's domain key: the idempotency key the provider sees. */
export const CHARGE_KEY = `order-${ORDER}-charge`;
/** charge_card's ledger key: its domain key, scoped by the tool's name. */
export const CHARGE_LEDGER_KEY = `charge_card:${CHARGE_KEY}`;
/** The support agent's tools, in the order the model calls them. */
export const TOOLS: readonly ToolName[] = ["lookup_order", "charge_card", "send_receipt"];

/** A scene of the seed's timeline on `kind`: one user turn, three parallel calls, then the answer. */
export function seedScene(name: string, kind: StoreKind, options?: SceneOptions): CrashScene {
  const base = { threadId: `order-${ORDER}-${name}`, rounds: [SEED_CALLS], answer: SEED_ANSWER };
  return new CrashScene(name, kind, base, options);
}

/** Side effects per tool in the log. */
export function effectsByTool(stored: StoredThread): Record<ToolName, number> {
  const counts = { lookup_order: 0, charge_card: 0, send_receipt: 0 };
  for (const effect of stored.effects) counts[effect.tool] += 1;
  return counts;
}

/**
 * What a resume with the default `"retry"` policy must leave in the log, from the state a kill
 * left: a recorded call is replayed (no new effect); a claimed call that was never recorded is
 * in doubt and runs once more (whether or not its killed run had acted).
 */
export function effectsAfterRetry(killed: StoredThread): Record<ToolName, number> {
  const counts = effectsByTool(killed);
  for (const name of TOOLS) {
    const entry = killed.ledger.find((e) => e.toolName === name);
    if (entry?.status !== "completed") counts[name] += 1;
  }
  return counts;
}

/** Asserts the worker killed itself with a real SIGKILL, at the point it was armed for. */
export function expectSelfKilled(run: WorkerRun, point: string, tool?: ToolName): void {
  expect(run.exit, run.stderr).toEqual({ code: null, signal: "SIGKILL" });
  expect(run.killing?.point, "where the worker died").toBe(point);
  if (tool) expect(run.killing?.tool, "the tool the kill was aimed at").toBe(tool);
  expect(run.done, "a killed worker must not finish its run").toBeUndefined();
}

/** Asserts the worker ran to the end of its run and exited normally; returns its `done` report. */
export function expectDone(run: WorkerRun, status: string): WorkerMessage {
  expect(run.exit, `worker exit\n${run.stderr}`).toEqual({ code: 0, signal: null });
  const failed = run.messages.find((m) => m.type === "failed");
  expect(failed, "the run rejected").toBeUndefined();
  expect(run.done?.status, "how the run ended").toBe(status);
  return run.done!;
}

/** The `tool_result` events a stream run reported for `tool`. */
export function toolResults(run: WorkerRun, tool: ToolName): Record<string, unknown>[] {
  return run.messages.flatMap((m) => {
    const event = m.event as Record<string, unknown> | undefined;
    return m.type === "event" && event?.type === "tool_result" && event.toolName === tool
      ? [event]
      : [];
  });
}

/** The counter total the worker's OpenTelemetry meter reported for `tool` (0 when never counted). */
export function metric(run: WorkerRun, name: string, tool: ToolName): number {
  const sums = run.done?.metrics as Record<string, Record<string, number>> | undefined;
  return sums?.[`tenxgraph.${name}`]?.[tool] ?? 0;
}

/** The ledger entry of the seed's charge. */
export function chargeEntry(stored: StoredThread): LedgerEntry | undefined {
  return stored.ledger.find((e) => e.key === CHARGE_LEDGER_KEY);
}

/** The tool message that answered the charge (the model's second call, `call_2`). */
export function chargeAnswer(stored: StoredThread): ToolMessage | undefined {
  return stored.messages.find(
    (m): m is ToolMessage => m.role === "tool" && m.toolCallId === "call_2",
  );
}

/**
 * Starts the seed request in a worker that kills itself at `kill`, checks that it died there,
 * and returns the thread as the crash left it (its invariants checked).
 */
export async function crashSeedRun(
  scene: CrashScene,
  via: "invoke" | "stream",
  kill: KillPlan,
  policies?: AgentParams["policies"],
): Promise<StoredThread> {
  const crashed = await scene.run({
    via,
    input: { kind: "new", text: SEED_REQUEST },
    ...(policies ? { policies } : {}),
    kill,
  });
  expectSelfKilled(crashed, kill.point, kill.tool);
  return checkInvariants(scene, null, { finished: false });
}

/**
 * Continues the crashed thread in a fresh worker, checks that the run completed, and returns
 * the run and the thread as it ended (its invariants checked against `killed`).
 */
export async function resumeToEnd(
  scene: CrashScene,
  via: "invoke" | "stream",
  killed: StoredThread,
  policies?: AgentParams["policies"],
): Promise<{ resumed: WorkerRun; final: StoredThread }> {
  const resumed = await scene.run({
    via,
    input: { kind: "continue" },
    ...(policies ? { policies } : {}),
  });
  expectDone(resumed, "completed");
  const final = await checkInvariants(scene, killed, { finished: true });
  return { resumed, final };
}

/**
 * Kills a worker in the window the ledger cannot close: charge_card returned (the card is
 * charged, the log says so) and its result is not recorded yet (`tool.after_return`). Returns
 * the thread as the crash left it, after checking that it is exactly that.
 */
export async function crashInWindow(
  scene: CrashScene,
  via: "invoke" | "stream",
  policies: AgentParams["policies"],
): Promise<StoredThread> {
  const killed = await crashSeedRun(
    scene,
    via,
    { point: "tool.after_return", tool: "charge_card" },
    policies,
  );
  expect(killed.checkpoint).toMatchObject({ status: "running", currentNode: "TOOL" });
  expect(chargeEntry(killed)).toMatchObject({ status: "started", attempt: 1 });
  expect(effectsByTool(killed).charge_card, "the card was charged before the crash").toBe(1);
  return killed;
}

/** The in-doubt warnings a run logged for the charge. */
export function inDoubtWarnings(run: WorkerRun): WorkerMessage[] {
  return run.messages.filter(
    (m) => m.type === "log" && m.key === CHARGE_LEDGER_KEY && String(m.msg).includes("IN DOUBT"),
  );
}

/** `[status, attempt]` of each tool's ledger entry (the seed has one call per tool). */
export function ledgerByTool(stored: StoredThread): Partial<Record<ToolName, [string, number]>> {
  return Object.fromEntries(stored.ledger.map((e) => [e.toolName, [e.status, e.attempt]]));
}
