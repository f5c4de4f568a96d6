import { assertions, claim, createThread, tick } from "./fixtures.js";
import { ledgerEditedCallsConformance } from "./ledger-edited-calls.js";
import { ledgerLeasesConformance } from "./ledger-leases.js";
import { ledgerRecordsConformance } from "./ledger-records.js";
import { ledgerStepWritesConformance } from "./ledger-step-writes.js";
import { ledgerToolKeysConformance } from "./ledger-tool-keys.js";
import type { GetCheckpointer, GetPeer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** The tool ledger: claims that only one execution wins, takeovers, listing; then its records and leases. */
export function ledgerConformance(get: GetCheckpointer, test: TestApi, getPeer: GetPeer): void {
  const { describe, it, expect } = test;
  const { entryOf } = assertions(expect);
  describe("ledger", () => {
    it("wins a first claim as attempt 1 with a started entry", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const results = await checkpointer.claimCalls(threadId, [claim("m1:call_1", "run-a")]);

      expect(results).toEqual([{ won: true, key: "m1:call_1", attempt: 1 }]);
      const entry = await entryOf(checkpointer, threadId, "m1:call_1");
      expect(entry).toEqual({
        key: "m1:call_1",
        toolName: "charge_card",
        status: "started",
        attempt: 1,
        ownerRunId: "run-a",
        startedAt: expect.any(String),
        heartbeatAt: expect.any(String),
        leaseExpiresAt: expect.any(String),
        leaseExpiresInMs: expect.any(Number),
      });
    });

    it("lets only the first of two claims of one key in one batch win", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      // Two calls of one message sharing a domain key claim it in the same batch.
      const results = await checkpointer.claimCalls(threadId, [
        claim("order-1", "run-a"),
        claim("other", "run-a"),
        claim("order-1", "run-a"),
      ]);
      expect(results.map((r) => [r.key, r.won])).toEqual([
        ["order-1", true],
        ["other", true],
        ["order-1", false],
      ]);
      expect(results[2]).toMatchObject({ entry: { status: "started", attempt: 1 } });
      expect(await checkpointer.listCalls(threadId)).toHaveLength(2);
    });

    it("loses a second claim of the same key, which sees the entry", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k", "run-a")]);

      const [second] = await checkpointer.claimCalls(threadId, [claim("k", "run-b")]);
      expect(second).toMatchObject({
        won: false,
        key: "k",
        entry: { key: "k", status: "started", attempt: 1, ownerRunId: "run-a" },
      });
      // The runtime decides from a lost claim's entry whether its holder is alive.
      expect(second?.won === false && second.entry).toMatchObject({
        leaseExpiresAt: expect.any(String),
        leaseExpiresInMs: expect.any(Number),
      });

      await checkpointer.completeCall(
        threadId,
        { key: "k", attempt: 1 },
        { __kind__: "raw", value: 7 },
      );
      const [third] = await checkpointer.claimCalls(threadId, [claim("k", "run-c")]);
      expect(third).toMatchObject({
        won: false,
        entry: { status: "completed", attempt: 1, result: { __kind__: "raw", value: 7 } },
      });
    });

    it("lets exactly one of several concurrent claims of one key win", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const runs = ["run-1", "run-2", "run-3", "run-4", "run-5"];
      const parties = [checkpointer, getPeer()];
      const results = await Promise.all(
        runs.map((run, i) => parties[i % 2]!.claimCalls(threadId, [claim("k", run)])),
      );

      const winners = runs.filter((_, i) => results[i]![0]!.won);
      expect(winners).toHaveLength(1);
      for (const [result] of results) {
        if (!result!.won)
          expect(result!.entry).toMatchObject({ attempt: 1, ownerRunId: winners[0] });
      }
      expect(await checkpointer.listCalls(threadId)).toMatchObject([
        { key: "k", attempt: 1, ownerRunId: winners[0] },
      ]);
    });

    it("claims several keys in one batch, answering in claim order", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k1", "run-a")]);

      const results = await checkpointer.claimCalls(threadId, [
        claim("k3", "run-b"),
        claim("k1", "run-b"),
        claim("k2", "run-b"),
      ]);
      expect(results).toMatchObject([
        { won: true, key: "k3", attempt: 1 },
        { won: false, key: "k1", entry: { ownerRunId: "run-a", attempt: 1 } },
        { won: true, key: "k2", attempt: 1 },
      ]);
      expect(await checkpointer.listCalls(threadId)).toHaveLength(3);
    });

    it("takes over attempt n as attempt n+1 and fences the old attempt out", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k", "run-a")]);

      const [takeover] = await checkpointer.claimCalls(threadId, [claim("k", "run-b", 1)]);
      expect(takeover).toEqual({ won: true, key: "k", attempt: 2 });
      const zombie = { key: "k", attempt: 1 };
      expect(await checkpointer.completeCall(threadId, zombie, "zombie result")).toBe(false);
      expect(await checkpointer.releaseCall(threadId, zombie)).toBe(false);
      expect(await entryOf(checkpointer, threadId, "k")).toMatchObject({
        status: "started",
        attempt: 2,
        ownerRunId: "run-b",
      });

      expect(await checkpointer.completeCall(threadId, { key: "k", attempt: 2 }, "real")).toBe(
        true,
      );
      expect(await checkpointer.completeCall(threadId, zombie, "zombie again")).toBe(false);
      expect(await entryOf(checkpointer, threadId, "k")).toMatchObject({
        attempt: 2,
        result: "real",
      });
    });

    it("loses a takeover whose expectedAttempt is stale", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k", "run-a")]);
      await checkpointer.claimCalls(threadId, [claim("k", "run-b", 1)]);

      const [late] = await checkpointer.claimCalls(threadId, [claim("k", "run-c", 1)]);
      expect(late).toMatchObject({ won: false, entry: { attempt: 2, ownerRunId: "run-b" } });
    });

    it("takes over completed and interrupted entries, clearing the old result", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("bad", "run-a"), claim("paused", "run-a")]);
      await checkpointer.completeCall(threadId, { key: "bad", attempt: 1 }, "not an envelope");
      await checkpointer.releaseCall(threadId, { key: "paused", attempt: 1 });

      const results = await checkpointer.claimCalls(threadId, [
        claim("bad", "run-b", 1),
        claim("paused", "run-b", 1),
      ]);
      expect(results).toEqual([
        { won: true, key: "bad", attempt: 2 },
        { won: true, key: "paused", attempt: 2 },
      ]);
      for (const key of ["bad", "paused"]) {
        const entry = await entryOf(checkpointer, threadId, key);
        expect(entry).toMatchObject({ status: "started", attempt: 2, ownerRunId: "run-b" });
        expect(entry).not.toHaveProperty("result");
        expect(entry).not.toHaveProperty("completedAt");
      }
    });

    it("rejects a takeover of a key that has no entry and applies nothing of the batch", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const batch = [claim("fresh", "run-a"), claim("vanished", "run-a", 3)];
      await expect(checkpointer.claimCalls(threadId, batch)).rejects.toThrow();
      expect(await checkpointer.listCalls(threadId)).toEqual([]);
    });

    it("lists entries oldest claim first", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      expect(await checkpointer.listCalls(threadId)).toEqual([]);
      for (const key of ["m9:c", "m1:a", "m5:b"]) {
        await checkpointer.claimCalls(threadId, [claim(key, "run-a")]);
        await tick(2);
      }
      const keys = (await checkpointer.listCalls(threadId)).map((e) => e.key);
      expect(keys).toEqual(["m9:c", "m1:a", "m5:b"]);
    });

    it("gets only the entries that exist", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("a", "r"), claim("b", "r")]);

      const found = await checkpointer.getCalls(threadId, ["b", "missing", "a"]);
      expect(found.map((e) => e.key).sort()).toEqual(["a", "b"]);
      expect(await checkpointer.getCalls(threadId, ["missing"])).toEqual([]);
      expect(await checkpointer.getCalls(threadId, [])).toEqual([]);
    });

    ledgerRecordsConformance(get, test);
    ledgerLeasesConformance(get, test);
    ledgerToolKeysConformance(get, test);
    ledgerEditedCallsConformance(get, test);
    ledgerStepWritesConformance(get, test);
  });
}
