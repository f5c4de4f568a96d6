import { Message } from "../../messages/message.js";
import type { Checkpointer } from "../../storage/checkpointer.js";
import type { CheckpointerHarness } from "./checkpointer-harness.js";
import { assertions, checkpointWrite, claim, createThread, newThreadId } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

const ids = (messages: readonly Message[]) => messages.map((message) => message.id);
const texts = (messages: readonly Message[]) => messages.map((message) => message.content);

/**
 * Versions stay readable (each with its node, run, parent and transcript), a write may fork an
 * earlier version or edit the transcript without rewriting a row, and old versions and expired
 * threads go when asked.
 */
export function historyConformance(
  get: GetCheckpointer,
  test: TestApi,
  harness: CheckpointerHarness,
): void {
  const { describe, it, expect } = test;
  const { expectErrorCode } = assertions(expect);

  /** A thread of three versions: [a], [a, b] by MODEL in run-1, [a, b, c] by TOOLS in run-1. */
  async function threeVersions(checkpointer: Checkpointer) {
    const [a, b, c] = [Message.user("a"), Message.assistant("b"), Message.user("c")];
    const threadId = await createThread(checkpointer, { newMessages: [a], values: { n: 1 } });
    await checkpointer.putCheckpoint(
      checkpointWrite(threadId, 1, {
        newMessages: [b],
        values: { n: 2 },
        node: "MODEL",
        runId: "run-1",
        currentNode: "TOOLS",
      }),
    );
    await checkpointer.putCheckpoint(
      checkpointWrite(threadId, 2, {
        newMessages: [c],
        values: { n: 3 },
        node: "TOOLS",
        runId: "run-1",
        currentNode: null,
        status: "completed",
      }),
    );
    return { threadId, a, b, c };
  }

  describe("history", () => {
    it("keeps every version with its node, run, parent and transcript", async () => {
      const checkpointer = get();
      const { threadId, a, b, c } = await threeVersions(checkpointer);

      const head = await checkpointer.getCheckpoint(threadId);
      expect(head).toMatchObject({ version: 3, parentVersion: 2, node: "TOOLS", runId: "run-1" });
      expect(await checkpointer.getVersion(threadId, 3)).toEqual(head);
      const second = await checkpointer.getVersion(threadId, 2);
      expect(second).toMatchObject({
        version: 2,
        parentVersion: 1,
        node: "MODEL",
        runId: "run-1",
        currentNode: "TOOLS",
        status: "running",
        values: { n: 2 },
        messageCount: 2,
      });
      expect(await checkpointer.getVersion(threadId, 1)).toMatchObject({
        parentVersion: null,
        node: null,
        runId: null,
        messageCount: 1,
      });
      expect(await checkpointer.getVersion(threadId, 4)).toBeNull();
      expect(await checkpointer.getVersion(newThreadId(), 1)).toBeNull();

      expect(ids(await checkpointer.listMessages(threadId, { version: 1 }))).toEqual([a.id]);
      expect(ids(await checkpointer.listMessages(threadId, { version: 2 }))).toEqual(ids([a, b]));
      expect(ids(await checkpointer.listMessages(threadId))).toEqual(ids([a, b, c]));
      expect(await checkpointer.listMessages(threadId, { version: 9 })).toEqual([]);
    });

    it("lists versions newest first, paged by limit and before", async () => {
      const checkpointer = get();
      const { threadId } = await threeVersions(checkpointer);
      const versions = async (page?: { limit?: number; before?: number }) =>
        (await checkpointer.listVersions(threadId, page)).map((v) => v.version);

      expect(await versions()).toEqual([3, 2, 1]);
      expect(await versions({ limit: 2 })).toEqual([3, 2]);
      expect(await versions({ before: 3 })).toEqual([2, 1]);
      expect(await versions({ before: 3, limit: 1 })).toEqual([2]);
      expect(await versions({ before: 1 })).toEqual([]);
      const listed = await checkpointer.listVersions(threadId);
      expect(listed[1]).toEqual(await checkpointer.getVersion(threadId, 2));
      expect(await checkpointer.listVersions(newThreadId())).toEqual([]);
      await expectErrorCode(
        checkpointer.listVersions(threadId, { before: 0 }),
        "STORAGE_FAILURE_001",
      );
    });

    it("forks an earlier version: its transcript goes on, the abandoned one stays readable", async () => {
      const checkpointer = get();
      const { threadId, a, b, c } = await threeVersions(checkpointer);
      const d = Message.user("d");
      const fork = checkpointWrite(threadId, 3, { parentVersion: 1, newMessages: [d] });

      expect(await checkpointer.putCheckpoint(fork)).toBe(4);
      expect(await checkpointer.getCheckpoint(threadId)).toMatchObject({
        version: 4,
        parentVersion: 1,
        messageCount: 2,
      });
      expect(ids(await checkpointer.listMessages(threadId))).toEqual(ids([a, d]));
      expect(ids(await checkpointer.listMessages(threadId, { offset: 1 }))).toEqual([d.id]);
      expect(ids(await checkpointer.listMessages(threadId, { version: 3 }))).toEqual(
        ids([a, b, c]),
      );

      // The next write appends to the fork's transcript, not to the abandoned one.
      const e = Message.assistant("e");
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 4, { newMessages: [e] }));
      expect(ids(await checkpointer.listMessages(threadId))).toEqual(ids([a, d, e]));
      // A message of the abandoned branch may be sent again on the fork.
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 5, { newMessages: [c] }));
      expect(ids(await checkpointer.listMessages(threadId))).toEqual(ids([a, d, e, c]));
    });

    it("replaces and removes messages as a new version, leaving the old one as it was", async () => {
      const checkpointer = get();
      const { threadId, a, b, c } = await threeVersions(checkpointer);
      const edited = { ...b, content: "b, edited" } as Message;
      const f = Message.user("f");
      const write = checkpointWrite(threadId, 3, {
        replacedMessages: [edited],
        removedMessageIds: [a.id],
        newMessages: [f],
      });

      expect(await checkpointer.putCheckpoint(write)).toBe(4);
      const now = await checkpointer.listMessages(threadId);
      expect(ids(now)).toEqual(ids([b, c, f]));
      expect(texts(now)).toEqual(["b, edited", "c", "f"]);
      expect((await checkpointer.getCheckpoint(threadId))?.messageCount).toBe(3);
      expect(texts(await checkpointer.listMessages(threadId, { version: 3 }))).toEqual([
        "a",
        "b",
        "c",
      ]);
      expect(texts(await checkpointer.listMessages(threadId, { offset: 1, limit: 1 }))).toEqual([
        "c",
      ]);
      // Removing every message leaves an empty transcript, appended to as usual after.
      await checkpointer.putCheckpoint(
        checkpointWrite(threadId, 4, { removedMessageIds: ids([b, c, f]) }),
      );
      expect(await checkpointer.listMessages(threadId)).toEqual([]);
      const g = Message.user("g");
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 5, { newMessages: [g] }));
      expect(ids(await checkpointer.listMessages(threadId))).toEqual([g.id]);
    });

    it("refuses transcript changes that do not fit the parent, writing nothing", async () => {
      const checkpointer = get();
      const { threadId, a, b } = await threeVersions(checkpointer);
      const before = await checkpointer.getCheckpoint(threadId);
      const stranger = Message.user("not in the thread");
      const refused = [
        checkpointWrite(threadId, 3, { replacedMessages: [stranger] }),
        checkpointWrite(threadId, 3, { removedMessageIds: [stranger.id] }),
        checkpointWrite(threadId, 3, { newMessages: [a] }),
        // b is in version 2's transcript but not in version 1's.
        checkpointWrite(threadId, 3, { parentVersion: 1, removedMessageIds: [b.id] }),
        checkpointWrite(threadId, 3, { parentVersion: 4 }),
        checkpointWrite(threadId, 3, { parentVersion: 0 }),
        checkpointWrite(threadId, 3, { removedMessageIds: [a.id], replacedMessages: [a] }),
      ];
      for (const [i, write] of refused.entries()) {
        await expectErrorCode(
          checkpointer.putCheckpoint(write),
          "STORAGE_FAILURE_001",
          undefined,
          `write ${i}`,
        );
      }
      expect(await checkpointer.getCheckpoint(threadId)).toEqual(before);
      expect(await checkpointer.listVersions(threadId)).toHaveLength(3);
    });

    it("prunes all but the newest versions, and the messages only they held", async () => {
      const checkpointer = get();
      const { threadId, a, b, c } = await threeVersions(checkpointer);
      const d = Message.user("d");
      // Version 4 forks version 1: b and c are then held by versions 2 and 3 alone.
      await checkpointer.putCheckpoint(
        checkpointWrite(threadId, 3, { parentVersion: 1, newMessages: [d] }),
      );

      expect(await checkpointer.pruneVersions(threadId, { keepLast: 2 })).toBe(2);
      expect((await checkpointer.listVersions(threadId)).map((v) => v.version)).toEqual([4, 3]);
      expect(await checkpointer.getVersion(threadId, 2)).toBeNull();
      expect(await checkpointer.listMessages(threadId, { version: 2 })).toEqual([]);
      expect(ids(await checkpointer.listMessages(threadId, { version: 3 }))).toEqual(
        ids([a, b, c]),
      );
      expect(await checkpointer.pruneVersions(threadId, { keepLast: 1 })).toBe(1);
      expect(ids(await checkpointer.listMessages(threadId))).toEqual(ids([a, d]));
      // A pruned version can no longer be forked.
      await expectErrorCode(
        checkpointer.putCheckpoint(checkpointWrite(threadId, 4, { parentVersion: 3 })),
        "STORAGE_FAILURE_001",
      );
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 4, { newMessages: [b] }));
      expect(ids(await checkpointer.listMessages(threadId))).toEqual(ids([a, d, b]));
      expect(await checkpointer.pruneVersions(newThreadId(), { keepLast: 1 })).toBe(0);
      await expectErrorCode(
        checkpointer.pruneVersions(threadId, { keepLast: 0 }),
        "STORAGE_FAILURE_001",
      );
    });

    it("keeps only the newest versions when the store is set to (keepVersions)", async () => {
      const checkpointer = await harness.createWith({ keepVersions: 2 });
      try {
        const threadId = await createThread(checkpointer, { newMessages: [Message.user("a")] });
        for (let version = 1; version < 5; version++) {
          await checkpointer.putCheckpoint(
            checkpointWrite(threadId, version, { newMessages: [Message.user(`m${version}`)] }),
          );
        }
        expect((await checkpointer.listVersions(threadId)).map((v) => v.version)).toEqual([5, 4]);
        expect(texts(await checkpointer.listMessages(threadId))).toEqual([
          "a",
          "m1",
          "m2",
          "m3",
          "m4",
        ]);
      } finally {
        await harness.destroy?.(checkpointer);
      }
    });

    it("deletes the threads whose delete-after time passed, with their ledger", async () => {
      const checkpointer = get();
      const expired = await createThread(checkpointer, { newMessages: [Message.user("x")] });
      await checkpointer.claimCalls(expired, [claim("m1:call_1", "run-1")]);
      const later = await createThread(checkpointer);
      const cleared = await createThread(checkpointer);

      expect(await checkpointer.setDeleteAfter(expired, new Date(Date.now() - 1000))).toBe(true);
      expect(await checkpointer.setDeleteAfter(later, new Date(Date.now() + 3_600_000))).toBe(true);
      await checkpointer.setDeleteAfter(cleared, new Date(Date.now() - 1000));
      await checkpointer.setDeleteAfter(cleared, null);
      expect(await checkpointer.setDeleteAfter(newThreadId(), new Date())).toBe(false);

      expect((await checkpointer.deleteExpiredThreads()).includes(expired)).toBe(true);
      expect(await checkpointer.getCheckpoint(expired)).toBeNull();
      expect(await checkpointer.listCalls(expired)).toEqual([]);
      expect(await checkpointer.listVersions(expired)).toEqual([]);
      expect(await checkpointer.getCheckpoint(later)).not.toBeNull();
      expect(await checkpointer.getCheckpoint(cleared)).not.toBeNull();
      expect((await checkpointer.deleteExpiredThreads()).includes(expired)).toBe(false);
      await expectErrorCode(
        checkpointer.setDeleteAfter(later, new Date(Number.NaN)),
        "STORAGE_FAILURE_001",
      );
    });
  });
}
