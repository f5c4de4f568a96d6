/**
 * PostgreSQL + Redis only: SIGKILL between a step's commit in PostgreSQL and the update of the
 * Redis hot copy that follows it. No fault point marks that moment, so a gate in front of Redis
 * holds the update back and the test kills the worker while it waits. Redis still holds the step
 * before; PostgreSQL holds the committed one, which is where the thread stands: a process that
 * was already running and a fresh one must both read it, and the fresh one go on from there.
 */
import { describe, expect, it } from "vitest";
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
      it("readers and a fresh process go on from the commit, not from the older copy in Redis", async () => {
        const gate = await RedisGate.open(testRedisUrl());
        const scene = seedScene(`cache-window-${via}`, "postgres", { redisUrl: gate.url });
        // A long-lived process on the same store (an API server, say), connected to Redis.
        const reader = openStore(scene.store, { logger: storeLogger() });
        try {
          expect(await reader.getCheckpoint(scene.threadId)).toBeNull();
          await killDuringCacheUpdate(scene, gate, via);
          const killed = await checkInvariants(scene, null, { finished: false });
          expect(killed.checkpoint, "committed").toMatchObject({
            version: MODEL_STEP_VERSION,
            status: "running",
            currentNode: "TOOL",
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
          expect(ledgerByTool(final)).toEqual({
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
 * reached the gate, before Redis got it.
 */
async function killDuringCacheUpdate(
  scene: CrashScene,
  gate: RedisGate,
  via: "invoke" | "stream",
): Promise<void> {
  const held = gate.holdUpdate(scene.threadId, MODEL_STEP_VERSION).then(() => "held" as const);
  const { worker, finished } = scene.start({
    via,
    input: { kind: "new", text: SEED_REQUEST },
    // Killed from outside inside a store call: it committed a write it never reported.
    outsideKillMs: 0,
  });
  const ended = worker.exited.then(() => "ended" as const);
  expect(await Promise.race([held, ended]), `the worker's Redis update\n${worker.stderr}`).toBe(
    "held",
  );
  await worker.kill();
  const crashed = await finished;
  expect(crashed.exit.signal, crashed.stderr).toBe("SIGKILL");
  // The store gives up on a Redis call after a second and goes on: the kill must come first.
  // The commit's own report (sent as putCheckpoint returns, right after it handed the cache its
  // update) may or may not have reached us by then.
  const reported = crashed.messages.filter((m) => m.type === "write").map((m) => m.version);
  expect(
    [[1], [1, MODEL_STEP_VERSION]],
    "writes the worker got past before the kill",
  ).toContainEqual(reported);
}
