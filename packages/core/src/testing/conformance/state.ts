import { Message } from "../../messages/message.js";
import { assertions, checkpointWrite, claim, createThread, newThreadId } from "./fixtures.js";
import type { GetCheckpointer, GetPeer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** Versioned state: compare-and-swap writes, conflicts that change nothing, JSON round-trips. */
export function stateConformance(get: GetCheckpointer, test: TestApi, getPeer: GetPeer): void {
  const { describe, it, expect } = test;
  const { expectErrorCode } = assertions(expect);
  describe("state", () => {
    it("creates a thread with expectedVersion 0 as version 1", async () => {
      const checkpointer = get();
      const threadId = newThreadId();
      const write = checkpointWrite(threadId, 0, {
        userId: "user-1",
        step: 1,
        values: { counter: 1 },
        newMessages: [Message.user("hello")],
      });

      expect(await checkpointer.putCheckpoint(write)).toBe(1);
      const checkpoint = await checkpointer.getCheckpoint(threadId);
      expect(checkpoint).toEqual({
        threadId,
        incarnation: write.incarnation,
        userId: "user-1",
        version: 1,
        parentVersion: null,
        node: null,
        runId: null,
        step: 1,
        currentNode: "MAIN",
        status: "running",
        values: { counter: 1 },
        interrupts: [],
        resumeAnswers: {},
        messageCount: 1,
        updatedAt: expect.any(String),
        parentThreadId: null,
      });
      expect(Date.parse(checkpoint!.updatedAt)).not.toBeNaN();
    });

    it("increments the version by one with every write from the current version", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      for (let version = 1; version <= 4; version++) {
        const write = checkpointWrite(threadId, version, {
          step: version * 10,
          values: { version },
        });
        expect(await checkpointer.putCheckpoint(write)).toBe(version + 1);
        const checkpoint = await checkpointer.getCheckpoint(threadId);
        expect(checkpoint).toMatchObject({
          version: version + 1,
          step: version * 10,
          values: { version },
        });
      }
    });

    it("rejects a stale expectedVersion with STORAGE_CONFLICT_001 and changes nothing", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer, { newMessages: [Message.user("one")] });
      await checkpointer.putCheckpoint(
        checkpointWrite(threadId, 1, { values: { n: 2 }, newMessages: [Message.assistant("two")] }),
      );
      const before = await checkpointer.getCheckpoint(threadId);
      const transcript = await checkpointer.listMessages(threadId);

      for (const expectedVersion of [1, 3]) {
        const stale = checkpointWrite(threadId, expectedVersion, {
          status: "failed",
          values: { n: 99 },
          newMessages: [Message.user("must not be stored")],
        });
        await expectErrorCode(checkpointer.putCheckpoint(stale), "STORAGE_CONFLICT_001", {
          threadId,
          expectedVersion,
          actualVersion: 2,
        });
      }
      expect(await checkpointer.getCheckpoint(threadId)).toEqual(before);
      expect(await checkpointer.listMessages(threadId)).toEqual(transcript);
    });

    it("rejects expectedVersion 0 on an existing thread", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer, { values: { original: true } });
      const before = await checkpointer.getCheckpoint(threadId);

      const again = checkpointWrite(threadId, 0, { newMessages: [Message.user("again")] });
      await expectErrorCode(checkpointer.putCheckpoint(again), "STORAGE_CONFLICT_001", {
        expectedVersion: 0,
        actualVersion: 1,
      });
      expect(await checkpointer.getCheckpoint(threadId)).toEqual(before);
      expect(await checkpointer.listMessages(threadId)).toEqual([]);
    });

    it("rejects a non-zero expectedVersion on a missing thread and creates nothing", async () => {
      const checkpointer = get();
      const threadId = newThreadId();
      const write = checkpointWrite(threadId, 3, { newMessages: [Message.user("orphan")] });
      await expectErrorCode(checkpointer.putCheckpoint(write), "STORAGE_CONFLICT_001", {
        expectedVersion: 3,
        actualVersion: null,
      });
      expect(await checkpointer.getCheckpoint(threadId)).toBeNull();
      expect(await checkpointer.listMessages(threadId)).toEqual([]);
    });

    it("lets exactly one of two concurrent creations of one thread win", async () => {
      const checkpointer = get();
      const threadId = newThreadId();
      const outcomes = await Promise.allSettled(
        [checkpointer, getPeer()].map((party, i) =>
          party.putCheckpoint(checkpointWrite(threadId, 0, { values: { creator: i } })),
        ),
      );
      const won = outcomes.filter((o) => o.status === "fulfilled");
      expect(won).toHaveLength(1);
      const lost = outcomes.find((o) => o.status === "rejected");
      // A unique-key violation on the new thread's row must surface as a version conflict.
      await expectErrorCode(Promise.reject(lost?.reason), "STORAGE_CONFLICT_001");
      expect(await checkpointer.getCheckpoint(threadId)).toMatchObject({ version: 1 });
    });

    it("lets exactly one of two concurrent writes from the same version win", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const messages = { a: Message.user("from a"), b: Message.user("from b") };
      const parties = { a: checkpointer, b: getPeer() };
      const outcomes = await Promise.allSettled(
        (["a", "b"] as const).map((writer) =>
          parties[writer].putCheckpoint(
            checkpointWrite(threadId, 1, { values: { writer }, newMessages: [messages[writer]] }),
          ),
        ),
      );

      const won = outcomes.flatMap((o, i) => (o.status === "fulfilled" ? [{ i, v: o.value }] : []));
      expect(won).toHaveLength(1);
      expect(won[0]!.v).toBe(2);
      const lost = outcomes.find((o) => o.status === "rejected");
      await expectErrorCode(Promise.reject(lost?.reason), "STORAGE_CONFLICT_001");
      const winner = won[0]!.i === 0 ? "a" : "b";
      expect(await checkpointer.getCheckpoint(threadId)).toMatchObject({
        version: 2,
        values: { writer: winner },
        messageCount: 1,
      });
      expect(await checkpointer.listMessages(threadId)).toEqual([messages[winner]]);
    });

    it("round-trips nulls in values, interrupts, resumeAnswers and currentNode", async () => {
      const checkpointer = get();
      const threadId = newThreadId();
      const fields = {
        currentNode: null,
        status: "interrupted" as const,
        values: { nothing: null, nested: { list: [null, 0, "", false], empty: {} }, none: [] },
        interrupts: [{ id: "call_1", value: null, node: "TOOL" }],
        resumeAnswers: { call_0: null },
      };
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 0, fields));
      expect(await checkpointer.getCheckpoint(threadId)).toMatchObject(fields);
      const read = await checkpointer.getCheckpoint(threadId);
      expect(read?.values).toStrictEqual(fields.values);
      expect(read?.interrupts).toStrictEqual(fields.interrupts);
      expect(read?.resumeAnswers).toStrictEqual(fields.resumeAnswers);
    });

    it("round-trips nested JSON state and interrupts exactly", async () => {
      const checkpointer = get();
      const threadId = newThreadId();
      const fields = {
        values: {
          order: { id: "4821", amountCents: 4200, tags: ["vip", "ünïcødé 😀"], ratio: 0.125 },
          text: 'line 1\nline 2\t"quoted" \\ slash',
          negative: -17.5,
          flags: [true, false],
        },
        interrupts: [
          {
            id: "m1:call_1",
            value: { amount: 42 },
            message: "Refund 42?",
            node: "TOOL",
            toolCallId: "call_1",
          },
          { id: "MAIN:3", value: ["a", { b: 1 }], node: "MAIN" },
        ],
        resumeAnswers: { "m1:call_0": { approved: true, note: "ok" } },
      };
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 0, fields));
      const read = await checkpointer.getCheckpoint(threadId);
      expect(read?.values).toStrictEqual(fields.values);
      expect(read?.interrupts).toStrictEqual(fields.interrupts);
      expect(read?.resumeAnswers).toStrictEqual(fields.resumeAnswers);
    });

    it("returns null for a thread that does not exist", async () => {
      expect(await get().getCheckpoint(newThreadId())).toBeNull();
    });

    it("keeps a thread's userId when a later write passes null", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer, { userId: "owner-7" });
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 1, { userId: null }));
      expect(await checkpointer.getCheckpoint(threadId)).toMatchObject({
        userId: "owner-7",
        version: 2,
      });
    });

    it("never changes a thread's owner: a write as another user is refused with STORAGE_OWNER_001 and applies nothing", async () => {
      const checkpointer = get();
      const first = Message.user("the owner's message");
      const threadId = await createThread(checkpointer, {
        userId: "owner-7",
        newMessages: [first],
      });
      const before = await checkpointer.getCheckpoint(threadId);
      await checkpointer.claimCalls(threadId, [claim("m1:call_1", "run-a")]);
      const intruding = {
        userId: "intruder",
        values: { taken: true },
        newMessages: [Message.user("the intruder's message")],
      };
      const refused = { threadId, userId: "intruder" };
      // The same status (a plain step) and a new one (a step that relists the thread).
      for (const status of ["running", "completed"] as const) {
        await expectErrorCode(
          checkpointer.putCheckpoint(checkpointWrite(threadId, 1, { ...intruding, status })),
          "STORAGE_OWNER_001",
          refused,
          `a ${status} write as another user`,
        );
      }
      if (checkpointer.commitStep) {
        const step = {
          ...checkpointWrite(threadId, 1, intruding),
          ledger: {
            completions: [{ attempt: { key: "m1:call_1", attempt: 1 }, result: "taken" }],
            claims: [claim("m1:call_2", "run-b")],
          },
        };
        await expectErrorCode(checkpointer.commitStep(step), "STORAGE_OWNER_001", refused);
      }
      expect(await checkpointer.getCheckpoint(threadId)).toEqual(before);
      expect(await checkpointer.listMessages(threadId)).toEqual([first]);
      expect(await checkpointer.listThreads({ userId: "intruder" })).toEqual([]);
      const ledger = await checkpointer.listCalls(threadId);
      expect(ledger.map((e) => [e.key, e.status])).toEqual([["m1:call_1", "started"]]);
      // A stale write is reported as stale, whoever it names.
      await expectErrorCode(
        checkpointer.putCheckpoint(checkpointWrite(threadId, 7, intruding)),
        "STORAGE_CONFLICT_001",
      );
      // The owner, or a write naming no user, goes on from the same version.
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 1, { userId: "owner-7" }));
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 2, { userId: null }));
      expect(await checkpointer.getCheckpoint(threadId)).toMatchObject({
        userId: "owner-7",
        version: 3,
      });
    });

    it("keeps a thread made without an owner ownerless: a write naming a user is refused", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer, { userId: null });
      await expectErrorCode(
        checkpointer.putCheckpoint(checkpointWrite(threadId, 1, { userId: "newcomer" })),
        "STORAGE_OWNER_001",
        { threadId, userId: "newcomer" },
      );
      expect(await checkpointer.getCheckpoint(threadId)).toMatchObject({
        userId: null,
        version: 1,
      });
    });

    it("rejects a write that repeats a message id of the transcript and applies nothing", async () => {
      const checkpointer = get();
      const first = Message.user("first");
      const threadId = await createThread(checkpointer, { newMessages: [first] });
      const before = await checkpointer.getCheckpoint(threadId);

      const repeat = checkpointWrite(threadId, 1, {
        values: { changed: true },
        newMessages: [Message.assistant("new"), { ...first, content: "rewritten" }],
      });
      await expect(checkpointer.putCheckpoint(repeat)).rejects.toThrow();
      expect(await checkpointer.getCheckpoint(threadId)).toEqual(before);
      expect(await checkpointer.listMessages(threadId)).toEqual([first]);
      // The version did not move: a correct write from version 1 still succeeds.
      expect(await checkpointer.putCheckpoint(checkpointWrite(threadId, 1))).toBe(2);
    });

    it("rejects a write that carries one message id twice and applies nothing", async () => {
      const checkpointer = get();
      const threadId = newThreadId();
      const twice = Message.user("twice");
      const write = checkpointWrite(threadId, 0, { newMessages: [twice, twice] });
      await expect(checkpointer.putCheckpoint(write)).rejects.toThrow();
      expect(await checkpointer.getCheckpoint(threadId)).toBeNull();
      expect(await checkpointer.listMessages(threadId)).toEqual([]);
    });

    it("round-trips a frontier, and reads a write without one as none", async () => {
      const checkpointer = get();
      const frontier = {
        tasks: [{ node: "MAIN" }, { node: "WORKER", input: { topic: "a", n: [1, null] } }],
        joins: { REDUCE: ["MAIN"] },
      };
      const threadId = await createThread(checkpointer, { frontier });
      expect((await checkpointer.getCheckpoint(threadId))?.frontier).toEqual(frontier);

      await checkpointer.putCheckpoint(checkpointWrite(threadId, 1));
      expect((await checkpointer.getCheckpoint(threadId))?.frontier ?? null).toBeNull();
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 2, { frontier: null }));
      expect((await checkpointer.getCheckpoint(threadId))?.frontier ?? null).toBeNull();
    });
  });
}
