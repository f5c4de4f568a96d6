import { Message } from "../../messages/message.js";
import { assertions, claim, createThread, tick } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** Ledger writes after a claim: completion, release and heartbeats, each fenced by attempt. */
export function ledgerRecordsConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;
  const { entryOf } = assertions(expect);
  describe("records", () => {
    it("records a completion for the claiming attempt", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k", "run-a")]);

      const result = { __kind__: "raw", value: { charged: 42 } };
      expect(await checkpointer.completeCall(threadId, { key: "k", attempt: 1 }, result)).toBe(
        true,
      );
      const entry = await entryOf(checkpointer, threadId, "k");
      expect(entry).toMatchObject({ status: "completed", attempt: 1, ownerRunId: "run-a", result });
      expect(entry).not.toHaveProperty("heartbeatAt");
      expect(entry.status === "completed" && Date.parse(entry.completedAt)).not.toBeNaN();
    });

    it("refuses to complete a call that is not started, or missing", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("done", "run-a"), claim("paused", "run-a")]);
      await checkpointer.completeCall(threadId, { key: "done", attempt: 1 }, "first");
      await checkpointer.releaseCall(threadId, { key: "paused", attempt: 1 });
      const before = await checkpointer.listCalls(threadId);

      expect(await checkpointer.completeCall(threadId, { key: "done", attempt: 1 }, "second")).toBe(
        false,
      );
      expect(await checkpointer.completeCall(threadId, { key: "paused", attempt: 1 }, "x")).toBe(
        false,
      );
      expect(await checkpointer.completeCall(threadId, { key: "missing", attempt: 1 }, "x")).toBe(
        false,
      );
      expect(await checkpointer.listCalls(threadId)).toEqual(before);
    });

    it("releases a call as interrupted, fenced by attempt", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k", "run-a")]);

      expect(await checkpointer.releaseCall(threadId, { key: "k", attempt: 2 })).toBe(false);
      expect(await entryOf(checkpointer, threadId, "k")).toMatchObject({ status: "started" });
      expect(await checkpointer.releaseCall(threadId, { key: "k", attempt: 1 })).toBe(true);
      const entry = await entryOf(checkpointer, threadId, "k");
      expect(entry).toMatchObject({ status: "interrupted", attempt: 1, ownerRunId: "run-a" });
      expect(entry).not.toHaveProperty("result");
      expect(await checkpointer.releaseCall(threadId, { key: "k", attempt: 1 })).toBe(false);
    });

    it("moves heartbeatAt forward only for started entries of the matching attempt", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("a", "r"), claim("b", "r"), claim("c", "r")]);
      await checkpointer.claimCalls(threadId, [claim("b", "r2", 1)]);
      await checkpointer.completeCall(threadId, { key: "c", attempt: 1 }, "done");
      const [a0, b0, c0] = await checkpointer.listCalls(threadId);
      await tick();

      const refs = ["a", "b", "c", "missing"].map((key) => ({ key, attempt: 1 }));
      await checkpointer.heartbeatCalls(threadId, refs);
      const [a1, b1, c1, ...rest] = await checkpointer.listCalls(threadId);
      const beat = (e: unknown) => Date.parse((e as { heartbeatAt: string }).heartbeatAt);
      // The age is measured at each read, so it is left out of the comparisons.
      const ageless = (e: unknown) => ({ ...(e as object), heartbeatAgeMs: undefined });
      expect(beat(a1)).toBeGreaterThan(beat(a0));
      expect(ageless(a1)).toEqual({ ...ageless(a0), heartbeatAt: expect.any(String) });
      expect(ageless(b1)).toEqual(ageless(b0));
      expect(c1).toEqual(c0);
      expect(rest).toEqual([]);

      await checkpointer.heartbeatCalls(threadId, [{ key: "b", attempt: 2 }]);
      expect(beat(await entryOf(checkpointer, threadId, "b"))).toBeGreaterThan(beat(b0));
    });

    it("measures a started entry's heartbeat age by the store's clock, reset by a heartbeat", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      await checkpointer.claimCalls(threadId, [claim("k", "r")]);
      const age = async () => {
        const entry = await entryOf(checkpointer, threadId, "k");
        if (entry.status !== "started")
          throw new Error(`expected a started entry: ${entry.status}`);
        return entry.heartbeatAgeMs;
      };
      await new Promise((resolve) => setTimeout(resolve, 60));
      const aged = await age();
      expect(aged).toBeGreaterThanOrEqual(40);
      await checkpointer.heartbeatCalls(threadId, [{ key: "k", attempt: 1 }]);
      expect(await age()).toBeLessThan(aged);
      await checkpointer.completeCall(threadId, { key: "k", attempt: 1 }, "done");
      expect(await entryOf(checkpointer, threadId, "k")).not.toHaveProperty("heartbeatAgeMs");
    });

    it("stores results of any JSON shape exactly as given", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const payloads: unknown[] = [
        { __kind__: "message", value: Message.tool("call_1", "Charged 42 USD") },
        { __kind__: "raw", value: { nested: [1, "two", null, true, { deep: 1.5 }] } },
        { __kind__: "unknown", value: 1 },
        { kind: "raw", extra: { "ünïcødé 😀": "line\nbreak", empty: "" } },
        '{"__kind__":"raw","value":1}',
        "plain text",
        "",
        42,
        -7.25,
        0,
        true,
        false,
        null,
        [],
        {},
        [1, [2, [3, { four: 4 }]]],
      ];
      const refs = payloads.map((_, i) => ({ key: `m1:call_${i}`, attempt: 1 }));
      await checkpointer.claimCalls(
        threadId,
        refs.map((ref) => claim(ref.key, "run-a")),
      );
      for (const [i, payload] of payloads.entries()) {
        expect(await checkpointer.completeCall(threadId, refs[i]!, payload)).toBe(true);
      }

      const entries = await checkpointer.listCalls(threadId);
      expect(
        entries.map((e) => (e.status === "completed" ? e.result : "not completed")),
      ).toStrictEqual(payloads);
    });
  });
}
