import type { Checkpointer, CheckpointWrite } from "../../storage/checkpointer.js";
import { Message } from "../../messages/message.js";
import { checkpointWrite, claim, newThreadId, tick } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

type WriteFields = Partial<Omit<CheckpointWrite, "threadId" | "expectedVersion">>;

/**
 * A thread at version 2 with a message, a ledger entry and a stop request: everything
 * `deleteThread` must take. `parentThreadId` is given on the first write only, as a run does.
 */
async function fullThread(
  checkpointer: Checkpointer,
  threadId: string,
  fields: WriteFields = {},
): Promise<string> {
  const newMessages = [Message.user(`hello from ${threadId}`)];
  await checkpointer.putCheckpoint(checkpointWrite(threadId, 0, { ...fields, newMessages }));
  await checkpointer.putCheckpoint(checkpointWrite(threadId, 1, { userId: fields.userId }));
  await checkpointer.claimCalls(threadId, [claim("m1:call_1", "run-a")]);
  await checkpointer.requestStop(threadId);
  return threadId;
}

/** What the store still holds of a thread; all empty once it is deleted. */
async function remains(checkpointer: Checkpointer, threadId: string) {
  return {
    checkpoint: await checkpointer.getCheckpoint(threadId),
    versions: await checkpointer.listVersions(threadId),
    messages: await checkpointer.listMessages(threadId),
    calls: await checkpointer.listCalls(threadId),
    stop: await checkpointer.countStopRequests(threadId),
  };
}

const GONE = { checkpoint: null, versions: [], messages: [], calls: [], stop: 0 };

/** A family as a subgraph run makes it: a parent, its child, the child's child. */
async function family(checkpointer: Checkpointer, fields: WriteFields = {}) {
  const parent = await fullThread(checkpointer, newThreadId(), fields);
  const child = await fullThread(checkpointer, `${parent}|WORKER@1`, {
    ...fields,
    parentThreadId: parent,
  });
  const grandchild = await fullThread(checkpointer, `${child}|INNER@1`, {
    ...fields,
    parentThreadId: child,
  });
  return { parent, child, grandchild };
}

/**
 * Child threads (a subgraph's, written with `parentThreadId`): listed only under their parent,
 * deleted with it, by the recorded parent and never by an id that merely starts like it.
 */
export function childThreadsConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;
  const ids = async (listed: Promise<{ threadId: string }[]>) =>
    (await listed).map((thread) => thread.threadId);

  describe("child threads", () => {
    it("records a child's parent from its first write, and keeps it", async () => {
      const checkpointer = get();
      const userId = `user-${newThreadId()}`;
      const { parent, child } = await family(checkpointer, { userId });
      // A later write naming another parent, or none, changes nothing.
      await checkpointer.putCheckpoint(
        checkpointWrite(child, 2, { userId, parentThreadId: newThreadId(), status: "completed" }),
      );
      await checkpointer.putCheckpoint(checkpointWrite(child, 3, { userId, parentThreadId: null }));

      const [listed] = await checkpointer.listThreads({ parentThreadId: parent });
      const checkpoint = await checkpointer.getCheckpoint(child);
      expect(listed).toEqual({
        threadId: child,
        parentThreadId: parent,
        userId,
        status: "running",
        version: 4,
        updatedAt: checkpoint?.updatedAt,
      });
      const [top] = await checkpointer.listThreads({ userId });
      expect(top).toMatchObject({ threadId: parent, parentThreadId: null });
    });

    it("reads a child's parent back with every version of it, and null for a top-level thread", async () => {
      const checkpointer = get();
      const { parent, child, grandchild } = await family(checkpointer);
      // A later write naming another parent, or none, changes nothing.
      await checkpointer.putCheckpoint(
        checkpointWrite(child, 2, { parentThreadId: newThreadId(), status: "completed" }),
      );
      await checkpointer.putCheckpoint(checkpointWrite(child, 3, { parentThreadId: null }));
      const lookalike = await fullThread(checkpointer, `${parent}|WORKER@9`);

      const parentOf = async (threadId: string) =>
        (await checkpointer.getCheckpoint(threadId))?.parentThreadId;
      expect(await parentOf(child)).toBe(parent);
      expect(await parentOf(grandchild)).toBe(child);
      // Read twice: a store with a cache may answer the second read from it.
      expect(await parentOf(child)).toBe(parent);
      expect(await parentOf(parent)).toBeNull();
      expect(await parentOf(lookalike)).toBeNull();
      expect((await checkpointer.getVersion(child, 1))?.parentThreadId).toBe(parent);
      const versions = await checkpointer.listVersions(child);
      expect(versions.map((version) => version.parentThreadId)).toEqual(versions.map(() => parent));
      expect((await checkpointer.getVersion(parent, 1))?.parentThreadId).toBeNull();
    });

    it("lists top-level threads alone unless asked for a thread's children", async () => {
      const checkpointer = get();
      const userId = `user-${newThreadId()}`;
      const { parent, child, grandchild } = await family(checkpointer, { userId });
      await tick();
      const sibling = await fullThread(checkpointer, `${parent}|WORKER@2`, {
        userId,
        parentThreadId: parent,
      });

      expect(await ids(checkpointer.listThreads({ userId }))).toEqual([parent]);
      const everyone = new Set(await ids(checkpointer.listThreads()));
      expect([parent, child, grandchild].map((id) => everyone.has(id))).toEqual([
        true,
        false,
        false,
      ]);
      // Direct children only, most recently created first, paged and filtered as any listing.
      expect(await ids(checkpointer.listThreads({ parentThreadId: parent }))).toEqual([
        sibling,
        child,
      ]);
      expect(await ids(checkpointer.listThreads({ parentThreadId: parent, offset: 1 }))).toEqual([
        child,
      ]);
      expect(await ids(checkpointer.listThreads({ parentThreadId: child, userId }))).toEqual([
        grandchild,
      ]);
      expect(await checkpointer.listThreads({ parentThreadId: child, userId: "nobody" })).toEqual(
        [],
      );
      expect(await checkpointer.listThreads({ parentThreadId: newThreadId() })).toEqual([]);
    });

    it("deletes a thread with its children and theirs, and nothing that merely shares its id's start", async () => {
      const checkpointer = get();
      const { parent, child, grandchild } = await family(checkpointer);
      // Top-level threads whose ids start with the parent's: written without a parent.
      const lookalike = await fullThread(checkpointer, `${parent}|WORKER@9`);
      const longer = await fullThread(checkpointer, `${parent}b`);
      const before = await Promise.all([lookalike, longer].map((id) => remains(checkpointer, id)));

      await checkpointer.deleteThread(parent);
      for (const id of [parent, child, grandchild]) {
        expect(await remains(checkpointer, id), id).toEqual(GONE);
      }
      const after = await Promise.all([lookalike, longer].map((id) => remains(checkpointer, id)));
      expect(withoutLeaseClock(after)).toEqual(withoutLeaseClock(before));
      expect(await checkpointer.listThreads({ parentThreadId: parent })).toEqual([]);
    });

    it("deletes a child alone, with its own children, and leaves its parent", async () => {
      const checkpointer = get();
      const { parent, child, grandchild } = await family(checkpointer);
      const sibling = await fullThread(checkpointer, `${parent}|WORKER@2`, {
        parentThreadId: parent,
      });

      await checkpointer.deleteThread(child);
      expect(await remains(checkpointer, child)).toEqual(GONE);
      expect(await remains(checkpointer, grandchild)).toEqual(GONE);
      expect(await checkpointer.getCheckpoint(parent)).toMatchObject({ version: 2 });
      expect(await checkpointer.listMessages(parent)).toHaveLength(1);
      expect(await ids(checkpointer.listThreads({ parentThreadId: parent }))).toEqual([sibling]);
    });

    it("deletes an expired thread's descendants with it and names each deleted thread", async () => {
      const checkpointer = get();
      const { parent, child, grandchild } = await family(checkpointer);
      const kept = await fullThread(checkpointer, `${parent}|WORKER@9`);
      await checkpointer.setDeleteAfter(parent, new Date(Date.now() - 1000));

      const deleted = await checkpointer.deleteExpiredThreads();
      expect(deleted.filter((id) => id.startsWith(parent)).sort()).toEqual(
        [parent, child, grandchild].sort(),
      );
      for (const id of [parent, child, grandchild]) {
        expect(await remains(checkpointer, id), id).toEqual(GONE);
      }
      expect(await checkpointer.getCheckpoint(kept)).toMatchObject({ version: 2 });
    });
  });
}

/** The time left on a started lease changes with every read; the rest must not. */
function withoutLeaseClock(snapshots: Awaited<ReturnType<typeof remains>>[]) {
  return snapshots.map((snapshot) => ({
    ...snapshot,
    calls: snapshot.calls.map((entry) => ({ ...entry, leaseExpiresInMs: undefined })),
  }));
}
