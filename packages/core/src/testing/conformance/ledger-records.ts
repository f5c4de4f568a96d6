import { Message } from "../../messages/message.js";
import { assertions, claim, createThread } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** Ledger writes after a claim: completion and release, each fenced by attempt. */
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
      expect(entry).not.toHaveProperty("leaseExpiresAt");
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
