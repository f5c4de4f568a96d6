import { Message } from "../../messages/message.js";
import { MAX_ID_LENGTH } from "../../storage/json-check.js";
import type { Checkpointer } from "../../storage/checkpointer.js";
import { assertions, checkpointWrite, claim, createThread, newThreadId } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** An id with a lone surrogate: UTF-8 has no encoding for it, so it would come back changed. */
const LONE = "order-\ud800";
/** PostgreSQL text cannot hold U+0000. */
const NUL = "order-\u0000";

/**
 * Ids a store cannot keep exactly are refused with `STORAGE_FAILURE_001` naming the field,
 * before anything is written, by every store alike: a thread id that is not a string of at most
 * `MAX_ID_LENGTH` characters, and any id holding a lone surrogate or U+0000. A test that passes
 * on one store then passes on all.
 */
export function idsConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;
  const { expectErrorCode } = assertions(expect);

  /** Everything listed for `threadId`: nothing, after a refused write. */
  async function nothingStored(checkpointer: Checkpointer, threadId: string) {
    expect(await checkpointer.getCheckpoint(threadId)).toBeNull();
    expect(await checkpointer.countStopRequests(threadId)).toBe(0);
  }

  describe("ids", () => {
    it("refuses thread, user, node and message ids with a lone surrogate or U+0000", async () => {
      const checkpointer = get();
      const refused = (field: string) => ({
        message: expect.stringMatching(new RegExp(`${field} ".*" cannot be stored exactly`)),
      });
      for (const bad of [LONE, NUL]) {
        const threadId = newThreadId();
        const label = JSON.stringify(bad);
        await expectErrorCode(
          checkpointer.putCheckpoint(checkpointWrite(bad, 0)),
          "STORAGE_FAILURE_001",
          refused("threadId"),
          `threadId ${label}`,
        );
        await expectErrorCode(
          checkpointer.putCheckpoint(checkpointWrite(threadId, 0, { userId: bad })),
          "STORAGE_FAILURE_001",
          refused("userId"),
          `userId ${label}`,
        );
        await expectErrorCode(
          checkpointer.putCheckpoint(checkpointWrite(threadId, 0, { currentNode: bad })),
          "STORAGE_FAILURE_001",
          refused("currentNode"),
          `currentNode ${label}`,
        );
        const message = { ...Message.user("hi"), id: bad };
        await expectErrorCode(
          checkpointer.putCheckpoint(checkpointWrite(threadId, 0, { newMessages: [message] })),
          "STORAGE_FAILURE_001",
          refused("messageId"),
          `message id ${label}`,
        );
        await expectErrorCode(
          checkpointer.requestStop(bad),
          "STORAGE_FAILURE_001",
          refused("threadId"),
          `requestStop ${label}`,
        );
        await nothingStored(checkpointer, threadId);
      }
    });

    it("refuses ledger keys, tool names and run ids that cannot be stored exactly", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const cases = [
        ["key", { ...claim(LONE, "run-a") }],
        ["toolName", { ...claim("m1:call_1", "run-a"), toolName: NUL }],
        ["ownerRunId", claim("m1:call_1", LONE)],
      ] as const;
      for (const [field, bad] of cases) {
        await expectErrorCode(
          checkpointer.claimCalls(threadId, [claim("m1:call_0", "run-a"), bad]),
          "STORAGE_FAILURE_001",
          { message: expect.stringContaining(`${field} "`) },
          field,
        );
      }
      // The batch is refused whole: not even its good claim was made.
      expect(await checkpointer.listCalls(threadId)).toEqual([]);
    });

    it(`refuses thread ids over ${MAX_ID_LENGTH} characters, and keeps one of exactly that`, async () => {
      const checkpointer = get();
      const longest = newThreadId().padEnd(MAX_ID_LENGTH, "x");
      const tooLong = `${longest}y`;
      const limit = `threadId is ${MAX_ID_LENGTH + 1} characters long; the limit is ${MAX_ID_LENGTH}`;
      await expectErrorCode(
        checkpointer.putCheckpoint(checkpointWrite(tooLong, 0)),
        "STORAGE_FAILURE_001",
        { message: expect.stringContaining(limit) },
        "putCheckpoint",
      );
      for (const [operation, call] of [
        ["getCheckpoint", () => checkpointer.getCheckpoint(tooLong)],
        ["requestStop", () => checkpointer.requestStop(tooLong)],
        ["listMessages", () => checkpointer.listMessages(tooLong)],
        ["claimCalls", () => checkpointer.claimCalls(tooLong, [claim("m1:call_1", "run-a")])],
      ] as const) {
        await expectErrorCode(call(), "STORAGE_FAILURE_001", undefined, operation);
      }
      await checkpointer.putCheckpoint(checkpointWrite(longest, 0));
      expect(await checkpointer.getCheckpoint(longest)).toMatchObject({ threadId: longest });
      await checkpointer.deleteThread(longest);
    });

    it("refuses a thread id that is not a string, or a user id that is not a string or null", async () => {
      const checkpointer = get();
      for (const bad of [{ id: 1 }, 42, null, undefined, ["t"]] as unknown[]) {
        const label = `threadId ${JSON.stringify(bad) ?? "undefined"}`;
        await expectErrorCode(
          checkpointer.putCheckpoint(checkpointWrite(bad as string, 0)),
          "STORAGE_FAILURE_001",
          { message: expect.stringContaining("threadId must be a string") },
          label,
        );
        await expectErrorCode(
          checkpointer.getCheckpoint(bad as string),
          "STORAGE_FAILURE_001",
          undefined,
          `getCheckpoint ${label}`,
        );
      }
      const threadId = newThreadId();
      await expectErrorCode(
        checkpointer.putCheckpoint(
          checkpointWrite(threadId, 0, { userId: 7 as unknown as string }),
        ),
        "STORAGE_FAILURE_001",
        { message: expect.stringContaining("userId must be a string") },
        "userId 7",
      );
      await nothingStored(checkpointer, threadId);
    });

    it("keeps well-formed ids of any script exactly, astral characters included", async () => {
      const checkpointer = get();
      const threadId = `заказ-😀-注文-${newThreadId()}`;
      const userId = `ユーザー-${threadId}`;
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 0, { userId }));
      await checkpointer.claimCalls(threadId, [claim("ключ-😀", "run-😀")]);
      expect(await checkpointer.listThreads({ userId })).toMatchObject([{ threadId, userId }]);
      expect(await checkpointer.getCalls(threadId, ["ключ-😀"])).toMatchObject([
        { key: "ключ-😀", ownerRunId: "run-😀" },
      ]);
    });
  });
}
