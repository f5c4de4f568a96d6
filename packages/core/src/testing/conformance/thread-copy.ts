import { Message } from "../../messages/message.js";
import type { Checkpointer, ThreadCheckpoint } from "../../storage/checkpointer.js";
import { chargeAgent } from "./charge-agent.js";
import { assertions, checkpointWrite, claim, newThreadId } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** A version without what a copy changes: the thread's id and its life. */
function asCopied({ threadId: _, incarnation: __, ...version }: ThreadCheckpoint) {
  return version;
}

/**
 * A thread of user `owner` at version 3: two turns of messages, the second replacing one; a
 * completed call, an interrupted one; a stop request; completed (not running).
 */
async function historyWithLedger(checkpointer: Checkpointer, owner: string): Promise<string> {
  const threadId = newThreadId();
  const asked = Message.user("charge my order");
  const fields = { userId: owner, status: "completed" as const };
  await checkpointer.putCheckpoint(
    checkpointWrite(threadId, 0, { ...fields, newMessages: [asked, Message.assistant("ok")] }),
  );
  const edited = { ...asked, content: "charge order 42" };
  await checkpointer.putCheckpoint(
    checkpointWrite(threadId, 1, {
      ...fields,
      values: { total: 42 },
      replacedMessages: [edited],
      newMessages: [Message.assistant("charged")],
    }),
  );
  await checkpointer.putCheckpoint(checkpointWrite(threadId, 2, { ...fields, node: "TOOL" }));
  await checkpointer.claimCalls(threadId, [
    claim("m1:call_1", "run-a"),
    claim("m1:call_2", "run-a"),
  ]);
  await checkpointer.completeCall(threadId, { key: "m1:call_1", attempt: 1 }, { value: "Charged" });
  await checkpointer.releaseCall(threadId, { key: "m1:call_2", attempt: 1 });
  await checkpointer.requestStop(threadId);
  return threadId;
}

/** Everything a copy must hold, as read through the contract. */
async function contents(checkpointer: Checkpointer, threadId: string) {
  const versions = await checkpointer.listVersions(threadId);
  const transcripts = await Promise.all(
    versions.map((v) => checkpointer.listMessages(threadId, { version: v.version })),
  );
  return {
    versions: versions.map(asCopied),
    transcripts,
    calls: await checkpointer.listCalls(threadId),
  };
}

/**
 * `copyThread`: a new thread holding the source's history and ledger, written in one
 * transaction, independent of the source from then on, and refused (writing nothing) where a
 * copy could run a recorded side effect again.
 */
export function threadCopyConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;
  const { expectErrorCode } = assertions(expect);
  // Tests share one store: each lists the threads of a user of its own.
  const newUser = () => `user-${newThreadId()}`;

  describe("copyThread", () => {
    it("copies every kept version, its transcript and the ledger to a new life", async () => {
      const checkpointer = get();
      const alice = newUser();
      const source = await historyWithLedger(checkpointer, alice);
      const copy = newThreadId();

      const head = await checkpointer.copyThread(source, copy);

      const original = (await checkpointer.getCheckpoint(source))!;
      expect(head).toEqual(await checkpointer.getCheckpoint(copy));
      expect(head).toMatchObject({ threadId: copy, userId: alice, parentThreadId: null });
      expect(asCopied(head)).toEqual(asCopied(original));
      expect(head.incarnation).not.toBe(original.incarnation);
      expect(await contents(checkpointer, copy)).toEqual(await contents(checkpointer, source));
      expect((await checkpointer.listCalls(copy)).map((e) => [e.key, e.status])).toEqual([
        ["m1:call_1", "completed"],
        ["m1:call_2", "interrupted"],
      ]);
      expect(await checkpointer.countStopRequests(copy)).toBe(0);
      const [listed] = await checkpointer.listThreads({ userId: alice, limit: 1 });
      expect(listed?.threadId, "the copy is listed as just created").toBe(copy);
    });

    it("replays a recorded call in the copy instead of running its tool again", async () => {
      const charges: string[] = [];
      const app = chargeAgent(get(), charges);
      const source = newThreadId();
      await app.invoke({ messages: [Message.user("charge my order")] }, { threadId: source });
      expect(charges).toEqual(["42"]);
      const copy = newThreadId();
      await get().copyThread(source, copy);

      // Run the copy again from the version that asked for the charge: its tool node runs.
      const versions = await get().listVersions(copy);
      const asked = versions.filter((v) => v.node === "MAIN").at(-1)!;
      const rerun = await app.invoke(null, { threadId: copy, fromVersion: asked.version });

      expect(charges, "the card was charged once in all").toEqual(["42"]);
      const answers = rerun.state.messages.filter((m) => m.role === "tool");
      expect(answers.map((m) => Message.text(m))).toEqual(["Charged order 42"]);
    });

    it("refuses a thread with a call in doubt, and writes nothing", async () => {
      const checkpointer = get();
      const alice = newUser();
      const source = await historyWithLedger(checkpointer, alice);
      await checkpointer.claimCalls(source, [claim("m2:call_1", "run-b")]);
      const copy = newThreadId();

      await expectErrorCode(checkpointer.copyThread(source, copy), "THREAD_008", {
        refusal: { reason: "in-doubt", keys: ["m2:call_1"] },
      });

      expect(await checkpointer.getCheckpoint(copy)).toBeNull();
      expect(await checkpointer.listVersions(copy)).toEqual([]);
      expect(await checkpointer.listCalls(copy)).toEqual([]);
      const listed = await checkpointer.listThreads({ userId: alice });
      expect(listed.map((t) => t.threadId)).toEqual([source]);
    });

    it("refuses a missing thread, a taken id, a running thread and subgraph threads", async () => {
      const checkpointer = get();
      const refused = async (from: string, to: string, reason: string) => {
        await expectErrorCode(checkpointer.copyThread(from, to), "THREAD_008", {
          refusal: { reason },
        });
        if (reason !== "target-exists") expect(await checkpointer.getCheckpoint(to)).toBeNull();
      };
      const done = await historyWithLedger(checkpointer, newUser());
      await refused(newThreadId(), newThreadId(), "missing");
      await refused(done, done, "target-exists");
      const taken = await historyWithLedger(checkpointer, newUser());
      await refused(done, taken, "target-exists");
      expect(await checkpointer.listVersions(taken)).toHaveLength(3);

      const running = newThreadId();
      await checkpointer.putCheckpoint(checkpointWrite(running, 0));
      await refused(running, newThreadId(), "running");

      const child = `${done}|WORKER@1`;
      const fields = { status: "completed" as const, parentThreadId: done };
      await checkpointer.putCheckpoint(checkpointWrite(child, 0, fields));
      await refused(child, newThreadId(), "child-thread");
      await refused(done, newThreadId(), "has-children");
    });

    it("keeps the copy and the source apart: writes to one never reach the other", async () => {
      const checkpointer = get();
      const alice = newUser();
      const source = await historyWithLedger(checkpointer, alice);
      const copy = newThreadId();
      const { incarnation } = await checkpointer.copyThread(source, copy);
      const before = await contents(checkpointer, source);

      const next = { userId: alice, incarnation, newMessages: [Message.user("only in copy")] };
      await checkpointer.putCheckpoint(checkpointWrite(copy, 3, next));
      await checkpointer.claimCalls(copy, [claim("m3:call_1", "run-c")]);
      await checkpointer.completeCall(copy, { key: "m3:call_1", attempt: 1 }, { value: 1 });
      await checkpointer.claimCalls(copy, [claim("m1:call_2", "run-c", 1)]);

      expect(await contents(checkpointer, source)).toEqual(before);
      // A write meant for the source's life is stale on the copy.
      const stale = checkpointWrite(copy, 4, { userId: alice });
      await expectErrorCode(checkpointer.putCheckpoint(stale), "STORAGE_CONFLICT_001");
      await checkpointer.deleteThread(source);
      expect((await checkpointer.getCheckpoint(copy))?.version).toBe(4);
      expect(await checkpointer.listMessages(copy)).toHaveLength(4);
      expect((await checkpointer.listCalls(copy)).map((e) => [e.key, e.attempt])).toEqual([
        ["m1:call_1", 1],
        ["m1:call_2", 2],
        ["m3:call_1", 1],
      ]);
    });
  });
}
