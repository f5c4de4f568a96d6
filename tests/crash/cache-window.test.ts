/**
 * PostgreSQL + Redis only: SIGKILL between a step's commit in PostgreSQL and the update of the
 * Redis hot copy that follows it. The store hands Redis that update without waiting for it, so
 * two things hold the worker at that moment: a gate in front of Redis holds the update back,
 * and the `step.after_write` fault point pauses the run before its next node begins. Without
 * the pause the tool node ran on while the test killed the worker, and how many tools it had
 * started (and recorded) by then decided the ledger's attempts: the test was flaky. Redis still
 * holds the step before; PostgreSQL holds the committed one, which is where the thread stands: a
 * process that was already running and a fresh one must both read it, and the fresh one go on
 * from there.
 */
import type { LedgerEntry } from "@tenxgraph/core/storage";
import { describe, it, type ExpectStatic } from "vitest";
import { RedisGate } from "@tenxgraph/test-servers";
import { testRedisUrl } from "@tenxgraph/test-servers/vitest";
import { openStore } from "../support/store-spec.js";
import { SCENE_TEST_TIMEOUT_MS, type CrashScene } from "./support/crash-scene.js";
import { storeLogger } from "./support/reporting-logger.js";
import { checkInvariants } from "./support/thread-invariants.js";
import {
  SEED_REQUEST,
  effectsByTool,
  ledgerByTool,
  seedScene,
  resumeToEnd,
} from "./support/seed-scenario.js";

/** The write after the model step: the run's second (the first stores the user's turn). */
const MODEL_STEP_VERSION = 2;

describe("on PostgreSQL + Redis", { timeout: SCENE_TEST_TIMEOUT_MS }, () => {
  describe.concurrent.each(["invoke", "stream"] as const)(
    "killed after a commit, before its Redis update (%s)",
    (via) => {
      it("readers and a fresh process go on from the commit, not from the older copy in Redis", async ({
        expect,
      }) => {
        const gate = await RedisGate.open(testRedisUrl());
        const scene = seedScene(`cache-window-${via}`, "postgres", { redisUrl: gate.url });
        // A long-lived process on the same store (an API server, say), connected to Redis.
        const reader = openStore(scene.store, { logger: storeLogger() });
        try {
          expect(await reader.getCheckpoint(scene.threadId)).toBeNull();
          await killDuringCacheUpdate(scene, gate, via, expect);
          const killed = await checkInvariants(scene, null, { finished: false });
          expect(killed.checkpoint, "committed").toMatchObject({
            version: MODEL_STEP_VERSION,
            status: "running",
            currentNode: "TOOL",
          });
          // The claims that rode in the model step's write, and nothing else: no tool began.
          expect(ledgerByTool(killed), "the ledger the kill left").toEqual({
            lookup_order: ["started", 1],
            send_receipt: ["started", 1],
          });
          // Soft: what the resume then does matters most, and is checked below.
          expect
            .soft(await reader.getCheckpoint(scene.threadId), "read by the long-lived process")
            .toMatchObject({ version: MODEL_STEP_VERSION, currentNode: "TOOL" });

          const { final } = await resumeToEnd(scene, via, killed);
          expect(effectsByTool(final)).toEqual({
            lookup_order: 1,
            charge_card: 1,
            send_receipt: 1,
          });
          // The retry calls' claims rode in the model step's write (ledger protocol v2): the
          // kill left them looking in doubt, so each ran once, as attempt 2. charge_card has a
          // domain key, so it was claimed only when its node ran.
          const ledgerAfterKill = JSON.stringify(killed.ledger.map(describeEntry));
          const ledgerAtEnd = JSON.stringify(final.ledger.map(describeEntry));
          expect(
            ledgerByTool(final),
            `ledger after the kill: ${ledgerAfterKill}; at the end: ${ledgerAtEnd}; ` +
              `the killed worker reported: ${killedReport(scene)}`,
          ).toEqual({
            lookup_order: ["completed", 2],
            charge_card: ["completed", 1],
            send_receipt: ["completed", 2],
          });
          expect(
            await reader.getCheckpoint(scene.threadId),
            "read once the turn completed",
          ).toMatchObject({ version: final.checkpoint?.version, status: "completed" });
        } finally {
          await reader.close();
          await scene.dispose();
          await gate.close();
        }
      });
    },
  );
});

/**
 * Starts the turn and SIGKILLs the worker once the Redis update of the model step's commit
 * reached the gate, before Redis got it, and the run paused right after that commit, before
 * its tool node began.
 */
async function killDuringCacheUpdate(
  scene: CrashScene,
  gate: RedisGate,
  via: "invoke" | "stream",
  expect: ExpectStatic,
): Promise<void> {
  const held = gate.holdUpdate(scene.threadId, MODEL_STEP_VERSION);
  const { worker, finished } = scene.start({
    via,
    input: { kind: "new", text: SEED_REQUEST },
    // The second durable write is the model step's (the first stores the user's turn).
    pause: { point: "step.after_write", hit: MODEL_STEP_VERSION },
  });
  // Rejects, quoting the worker's stderr, should the worker end instead.
  await Promise.all([held, worker.waitForType("paused", SCENE_TEST_TIMEOUT_MS)]);
  await worker.kill();
  const crashed = await finished;
  expect(crashed.exit.signal, crashed.stderr).toBe("SIGKILL");
  // Both writes were reported (the store reports a commit before the fault point fires, and the
  // channel keeps the order), and nothing after them: no tool began.
  const reported = crashed.messages.filter((m) => m.type === "write").map((m) => m.version);
  expect(reported, "writes the worker got past before the kill").toEqual([1, MODEL_STEP_VERSION]);
  expect(
    crashed.messages.filter((m) => m.type === "returned"),
    "tools that returned before the kill",
  ).toEqual([]);
}

/** A ledger entry in a failure message: what varied when this test was flaky. */
function describeEntry(entry: LedgerEntry): string {
  return `${entry.toolName} ${entry.status}@${entry.attempt} by ${entry.ownerRunId}`;
}

/** What the first (killed) worker reported before it died: writes, and a stream's events. */
function killedReport(scene: CrashScene): string {
  const reported = (scene.runs[0]?.messages ?? []).map((m) => {
    if (m.type === "write") return `write ${String(m.version)}`;
    const event = m.event as { type?: string; toolName?: string } | undefined;
    return event ? `event ${event.type ?? "?"} ${event.toolName ?? ""}`.trim() : m.type;
  });
  return JSON.stringify(reported);
}
