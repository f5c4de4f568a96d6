import type { LedgerEntry, StartedLedgerEntry } from "../../storage/ledger-entry.js";
import { assertions, claim, createThread, tick } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/**
 * Claim leases: a claimant states how long its claim stays live without a heartbeat, the store
 * keeps that expiry on its own clock, heartbeats renew it with the claimant's lease, and every
 * read says how long is left (negative once expired), whoever reads.
 */
export function ledgerLeasesConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;
  const { entryOf } = assertions(expect);
  const started = (entry: LedgerEntry | undefined): StartedLedgerEntry => {
    expect(entry?.status, `entry ${entry?.key}`).toBe("started");
    return entry as StartedLedgerEntry;
  };
  /** The lease an entry was given at its last claim or heartbeat, in ms. */
  const leaseOf = (entry: StartedLedgerEntry) =>
    Date.parse(entry.leaseExpiresAt) - Date.parse(entry.heartbeatAt);

  describe("leases", () => {
    it("gives a won claim the claimant's lease, from the claim, by the store's clock", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k", "run-a", 0, 90_000)]);

      const entry = started(await entryOf(checkpointer, threadId, "k"));
      expect(entry.heartbeatAt).toBe(entry.startedAt);
      expect(leaseOf(entry)).toBe(90_000);
      expect(entry.leaseExpiresInMs).toBeGreaterThan(0);
      expect(entry.leaseExpiresInMs).toBeLessThan(90_001);
    });

    it("gives a takeover the new claimant's lease, and reports it in a lost claim's entry", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k", "run-a", 0, 60_000)]);
      await checkpointer.claimCalls(threadId, [claim("k", "run-b", 1, 7_000)]);

      const [lost] = await checkpointer.claimCalls(threadId, [claim("k", "run-c", 0, 60_000)]);
      const entry = started(lost?.won === false ? lost.entry : undefined);
      expect(entry).toMatchObject({ attempt: 2, ownerRunId: "run-b" });
      expect(leaseOf(entry)).toBe(7_000);
      expect(entry.leaseExpiresInMs).toBeLessThan(7_001);
    });

    it("renews the lease of started entries of the matching attempt, and reports every attempt it did not renew", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const keys = ["a", "b", "c", "d"];
      await checkpointer.claimCalls(
        threadId,
        keys.map((key) => claim(key, "r", 0, 60_000)),
      );
      await checkpointer.claimCalls(threadId, [claim("b", "r2", 1, 60_000)]);
      await checkpointer.completeCall(threadId, { key: "c", attempt: 1 }, "done");
      await checkpointer.releaseCall(threadId, { key: "d", attempt: 1 });
      const [a0, b0, c0, d0] = await checkpointer.listCalls(threadId);
      await tick();

      const refs = [...keys, "missing"].map((key) => ({ key, attempt: 1 }));
      const lost = await checkpointer.heartbeatCalls(threadId, refs, 120_000);
      expect(lost.map((ref) => `${ref.key}@${ref.attempt}`).sort()).toEqual([
        "b@1",
        "c@1",
        "d@1",
        "missing@1",
      ]);
      const [a1, b1, c1, d1, ...rest] = await checkpointer.listCalls(threadId);
      const renewed = started(a1);
      expect(Date.parse(renewed.heartbeatAt)).toBeGreaterThan(Date.parse(started(a0).heartbeatAt));
      expect(leaseOf(renewed)).toBe(120_000);
      // The time left changes with every read; everything else of the others is untouched.
      const timeless = (e: unknown) => ({ ...(e as object), leaseExpiresInMs: undefined });
      expect(timeless(renewed)).toEqual({
        ...timeless(a0),
        heartbeatAt: renewed.heartbeatAt,
        leaseExpiresAt: renewed.leaseExpiresAt,
      });
      expect(timeless(b1)).toEqual(timeless(b0));
      expect([c1, d1]).toEqual([c0, d0]);
      expect(rest).toEqual([]);

      expect(
        await checkpointer.heartbeatCalls(threadId, [{ key: "b", attempt: 2 }], 5_000),
      ).toEqual([]);
      expect(leaseOf(started(await entryOf(checkpointer, threadId, "b")))).toBe(5_000);
      expect(await checkpointer.heartbeatCalls(threadId, [], 5_000)).toEqual([]);
    });

    it("lets a lease run out on the store's clock, whoever reads, until a heartbeat renews it", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k", "r", 0, 30)]);
      await tick(80);

      const expired = started(await entryOf(checkpointer, threadId, "k"));
      // Negative: how long ago the lease ran out.
      expect(expired.leaseExpiresInMs).toBeLessThan(0);
      expect(
        await checkpointer.heartbeatCalls(threadId, [{ key: "k", attempt: 1 }], 60_000),
      ).toEqual([]);
      expect(started(await entryOf(checkpointer, threadId, "k")).leaseExpiresInMs).toBeGreaterThan(
        0,
      );

      await checkpointer.completeCall(threadId, { key: "k", attempt: 1 }, "done");
      const done = await entryOf(checkpointer, threadId, "k");
      expect(done).not.toHaveProperty("leaseExpiresAt");
      expect(done).not.toHaveProperty("leaseExpiresInMs");
    });
  });
}
