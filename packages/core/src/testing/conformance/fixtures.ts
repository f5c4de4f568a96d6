import { randomUUID } from "node:crypto";
import type { ErrorCode } from "../../errors/codes.js";
import { isTenxgraphError } from "../../errors/tenxgraph-error.js";
import type { LedgerClaim, LedgerEntry } from "../../storage/ledger-entry.js";
import type { Checkpointer, CheckpointWrite } from "../../storage/checkpointer.js";
import type { Expect } from "./test-api.js";

/** Returns the checkpointer of the test that is running. */
export type GetCheckpointer = () => Checkpointer;

/**
 * The second party of a race: another connection to the same store, as a second process would
 * have one (the harness's `peer`), or the same instance when the store has no such thing.
 */
export type GetPeer = () => Checkpointer;

/** A thread id no other test uses, so every test can share one persistent store. */
export function newThreadId(): string {
  return `conformance-${randomUUID()}`;
}

/** A write with neutral defaults: a running thread with empty state and no new messages. */
export function checkpointWrite(
  threadId: string,
  expectedVersion: number,
  overrides: Partial<Omit<CheckpointWrite, "threadId" | "expectedVersion">> = {},
): CheckpointWrite {
  return {
    threadId,
    // The thread's first life; a test of a thread created again passes another.
    incarnation: "first-life",
    userId: null,
    expectedVersion,
    step: expectedVersion,
    currentNode: "MAIN",
    status: "running",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    newMessages: [],
    ...overrides,
  };
}

/**
 * Creates a thread at version 1 and returns its id. Ledger and stop tests create the thread
 * first because a SQL store may reference the thread row from those tables.
 */
export async function createThread(
  checkpointer: Checkpointer,
  overrides: Partial<Omit<CheckpointWrite, "threadId" | "expectedVersion">> = {},
): Promise<string> {
  const threadId = newThreadId();
  await checkpointer.putCheckpoint(checkpointWrite(threadId, 0, overrides));
  return threadId;
}

/** The lease of the suite's claims and heartbeats: far longer than any test runs. */
export const LEASE_MS = 600_000;

/** A claim of `key` by `ownerRunId` that expects `expectedAttempt` (0: a new call). */
export function claim(
  key: string,
  ownerRunId: string,
  expectedAttempt = 0,
  leaseMs = LEASE_MS,
): LedgerClaim {
  return { key, toolName: "charge_card", ownerRunId, leaseMs, expectedAttempt };
}

const RESOLVED = Symbol("resolved");

/** Fixtures that assert, bound to the test framework's `expect`. */
export function assertions(expect: Expect) {
  return {
    /** The entry of `key` as listed by the store, failing the test when there is none. */
    async entryOf(checkpointer: Checkpointer, threadId: string, key: string): Promise<LedgerEntry> {
      const [entry] = await checkpointer.getCalls(threadId, [key]);
      expect(entry, `ledger entry '${key}'`).toBeDefined();
      return entry!;
    },

    /** Asserts that `promise` rejects with a tenxgraph error carrying `code` (and `fields`). */
    async expectErrorCode(
      promise: Promise<unknown>,
      code: ErrorCode,
      fields?: Record<string, unknown>,
      label = "",
    ): Promise<void> {
      const error = await promise.then(
        () => RESOLVED,
        (reason: unknown) => reason,
      );
      expect(error, `${label} should reject`).not.toBe(RESOLVED);
      expect(isTenxgraphError(error) ? error.code : error, label).toBe(code);
      if (fields) expect(error).toMatchObject(fields);
    },
  };
}

/** Waits long enough for a store's clock (millisecond ISO timestamps) to move on. */
export function tick(ms = 15): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
