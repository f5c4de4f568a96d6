import type { Checkpointer, StepCommit, StepWrite } from "../../storage/checkpointer.js";
import type { LedgerClaim } from "../../storage/ledger-entry.js";
import {
  assertions,
  checkpointWrite,
  claim,
  createThread,
  newThreadId,
  type GetCheckpointer,
} from "./fixtures.js";
import type { TestApi } from "./test-api.js";

const RESULT = { __kind__: "raw", value: "charged" };

/**
 * Ledger writes that ride in a step's write (`commitStep`, ledger protocol v2): the step's last
 * result, fenced on its attempt, and the next node's claims, inserted where absent. Everything
 * commits with the checkpoint or nothing does.
 */
export function ledgerStepWritesConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;
  const { entryOf, expectErrorCode } = assertions(expect);

  /** `commitStep`, which every store of ours has; a test failing here names the missing method. */
  function commitStep(checkpointer: Checkpointer, write: StepWrite): Promise<StepCommit> {
    expect(typeof checkpointer.commitStep, "the store implements commitStep").toBe("function");
    return checkpointer.commitStep!(write);
  }

  function stepWrite(
    threadId: string,
    expectedVersion: number,
    ledger: Partial<StepWrite["ledger"]>,
    messageId = `m-${expectedVersion}`,
  ): StepWrite {
    const message = {
      id: messageId,
      role: "tool" as const,
      content: "charged",
      toolCallId: "call_1",
      createdAt: new Date().toISOString(),
    };
    return {
      ...checkpointWrite(threadId, expectedVersion, { newMessages: [message] }),
      ledger: { completions: [], claims: [], ...ledger },
    };
  }

  describe("ledger writes in a step write", () => {
    it("records a riding result with the checkpoint, in one commit", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("m1:call_1", "run-a")]);

      const commit = await commitStep(
        checkpointer,
        stepWrite(threadId, 1, {
          completions: [{ attempt: { key: "m1:call_1", attempt: 1 }, result: RESULT }],
        }),
      );

      expect(commit).toEqual({ version: 2, claims: [] });
      expect(await entryOf(checkpointer, threadId, "m1:call_1")).toMatchObject({
        status: "completed",
        attempt: 1,
        result: RESULT,
      });
      expect(await checkpointer.listMessages(threadId)).toHaveLength(1);
    });

    it("writes nothing when a riding result's claim was taken over, and says so", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("m1:call_1", "run-a")]);
      await checkpointer.claimCalls(threadId, [claim("m1:call_1", "run-b", 1)]);

      const write = stepWrite(threadId, 1, {
        completions: [{ attempt: { key: "m1:call_1", attempt: 1 }, result: RESULT }],
        claims: [claim("m2:call_9", "run-a")],
      });
      await expectErrorCode(commitStep(checkpointer, write), "TOOL_CONFLICT_002", {
        key: "m1:call_1",
        attempt: 1,
      });

      const checkpoint = await checkpointer.getCheckpoint(threadId);
      expect(checkpoint?.version).toBe(1);
      expect(await checkpointer.listMessages(threadId)).toEqual([]);
      expect(await entryOf(checkpointer, threadId, "m1:call_1")).toMatchObject({
        status: "started",
        attempt: 2,
        ownerRunId: "run-b",
      });
      expect(await checkpointer.getCalls(threadId, ["m2:call_9"])).toEqual([]);
    });

    it("writes none of several riding results when one claim was taken over", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [
        claim("m1:call_a", "run-a"),
        claim("m1:call_b", "run-a"),
      ]);
      await checkpointer.claimCalls(threadId, [claim("m1:call_a", "run-b", 1)]);

      // The held claim first: a store that completes it before finding the lost one must undo it.
      const write = stepWrite(threadId, 1, {
        completions: [
          { attempt: { key: "m1:call_b", attempt: 1 }, result: RESULT },
          { attempt: { key: "m1:call_a", attempt: 1 }, result: RESULT },
        ],
      });
      await expectErrorCode(commitStep(checkpointer, write), "TOOL_CONFLICT_002", {
        key: "m1:call_a",
        attempt: 1,
      });

      expect((await checkpointer.getCheckpoint(threadId))?.version).toBe(1);
      expect(await checkpointer.listMessages(threadId)).toEqual([]);
      expect(await entryOf(checkpointer, threadId, "m1:call_b")).toMatchObject({
        status: "started",
        attempt: 1,
      });
      expect(await entryOf(checkpointer, threadId, "m1:call_a")).toMatchObject({
        status: "started",
        attempt: 2,
        ownerRunId: "run-b",
      });
    });

    it("refuses a riding result for a call already completed, writing nothing", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("m1:call_1", "run-a")]);
      await checkpointer.completeCall(threadId, { key: "m1:call_1", attempt: 1 }, { first: true });

      const write = stepWrite(threadId, 1, {
        completions: [{ attempt: { key: "m1:call_1", attempt: 1 }, result: RESULT }],
      });
      await expectErrorCode(commitStep(checkpointer, write), "TOOL_CONFLICT_002");
      expect(await entryOf(checkpointer, threadId, "m1:call_1")).toMatchObject({
        result: { first: true },
      });
      expect((await checkpointer.getCheckpoint(threadId))?.version).toBe(1);
    });

    it("records nothing of a stale step write: neither its result nor its claims", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("m1:call_1", "run-a")]);
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 1));

      const write = stepWrite(threadId, 1, {
        completions: [{ attempt: { key: "m1:call_1", attempt: 1 }, result: RESULT }],
        claims: [claim("m2:call_9", "run-a")],
      });
      await expectErrorCode(commitStep(checkpointer, write), "STORAGE_CONFLICT_001");
      expect(await entryOf(checkpointer, threadId, "m1:call_1")).toMatchObject({
        status: "started",
      });
      expect(await checkpointer.getCalls(threadId, ["m2:call_9"])).toEqual([]);
    });

    it("inserts riding claims where the call has no entry and keeps the entries that exist", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("charge:order-7", "run-old")]);
      await checkpointer.completeCall(
        threadId,
        { key: "charge:order-7", attempt: 1 },
        { recorded: "before" },
      );

      const lease = 120_000;
      const claims: LedgerClaim[] = [
        claim("m2:call_1", "run-a", 0, lease),
        claim("charge:order-7", "run-a", 0, lease),
        claim("m2:call_2", "run-a", 0, lease),
      ];
      const commit = await commitStep(checkpointer, stepWrite(threadId, 1, { claims }));

      expect(commit.version).toBe(2);
      expect(commit.claims.map(({ key, won }) => [key, won])).toEqual([
        ["m2:call_1", true],
        ["charge:order-7", false],
        ["m2:call_2", true],
      ]);
      expect(commit.claims[0]).toEqual({ won: true, key: "m2:call_1", attempt: 1 });
      expect(commit.claims[1]).toMatchObject({
        entry: { status: "completed", attempt: 1, result: { recorded: "before" } },
      });
      const entry = await entryOf(checkpointer, threadId, "m2:call_1");
      expect(entry).toMatchObject({ status: "started", attempt: 1, ownerRunId: "run-a" });
      // The lease runs from the commit, by the store's clock.
      expect(entry.status === "started" && entry.leaseExpiresInMs).toBeGreaterThan(lease - 60_000);
      expect(entry.status === "started" && entry.leaseExpiresInMs).not.toBeGreaterThan(lease);
    });

    it("creates a thread and claims its first calls in one write", async () => {
      const checkpointer = get();
      const threadId = newThreadId();
      const commit = await commitStep(
        checkpointer,
        stepWrite(threadId, 0, { claims: [claim("m1:call_1", "run-a")] }),
      );
      expect(commit).toEqual({ version: 1, claims: [{ won: true, key: "m1:call_1", attempt: 1 }] });
      await checkpointer.deleteThread(threadId);
    });

    it("refuses malformed ledger writes before writing anything", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const cases: [string, Partial<StepWrite["ledger"]>][] = [
        ["a claim that takes over", { claims: [claim("k", "run-a", 2)] }],
        ["a claim without a lease", { claims: [claim("k", "run-a", 0, 0)] }],
        ["a key twice", { claims: [claim("k", "run-a"), claim("k", "run-b")] }],
        ["attempt 0", { completions: [{ attempt: { key: "k", attempt: 0 }, result: RESULT }] }],
      ];
      for (const [label, ledger] of cases) {
        await expectErrorCode(
          commitStep(checkpointer, stepWrite(threadId, 1, ledger)),
          "STORAGE_FAILURE_001",
          undefined,
          label,
        );
      }
      expect((await checkpointer.getCheckpoint(threadId))?.version).toBe(1);
      expect(await checkpointer.listCalls(threadId)).toEqual([]);
    });
  });
}
