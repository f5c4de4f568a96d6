import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Message } from "@tenxgraph/core";
import type { CheckpointWrite } from "@tenxgraph/core/storage";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { newThreadWrite } from "./support/new-thread-write.js";

const folder = join(tmpdir(), `tenxgraph-sqlite-heads-${randomUUID()}`);
const path = join(folder, "threads.db");
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Two connections to one file, as two processes have them. */
async function twoConnections<T>(
  body: (ours: SqliteCheckpointer, peer: SqliteCheckpointer) => Promise<T>,
): Promise<T> {
  const ours = new SqliteCheckpointer({ path });
  const peer = new SqliteCheckpointer({ path });
  try {
    return await body(ours, peer);
  } finally {
    await Promise.all([ours.close(), peer.close()]);
  }
}

// A connection continues the heads it wrote without reading them back; these check that what
// another connection wrote in between is never hidden by that.
describe("SqliteCheckpointer's own heads", () => {
  it("continues the transcript another connection wrote after its own last write", async () => {
    await twoConnections(async (ours, peer) => {
      const threadId = `heads-${randomUUID()}`;
      const [first, second, edited, third] = ["one", "two", "two, edited", "three"].map((text) =>
        Message.user(text),
      );
      const step = (expectedVersion: number, more: Partial<CheckpointWrite>) => ({
        ...newThreadWrite(threadId),
        expectedVersion,
        ...more,
      });
      await ours.putCheckpoint(step(0, { newMessages: [first!] }));
      await ours.putCheckpoint(step(1, { newMessages: [second!] }));
      // The peer replaces our second message and changes the status.
      const replaced = { ...edited!, id: second!.id };
      await peer.putCheckpoint(step(2, { replacedMessages: [replaced], status: "interrupted" }));

      expect(await ours.putCheckpoint(step(3, { newMessages: [third!] }))).toBe(4);
      expect(await ours.listMessages(threadId)).toEqual([first, replaced, third]);
      expect(await ours.getCheckpoint(threadId)).toMatchObject({ status: "running" });
      await expect(ours.putCheckpoint(step(3, { values: { late: true } }))).rejects.toMatchObject({
        code: "STORAGE_CONFLICT_001",
      });
      await expect(
        ours.putCheckpoint(step(4, { newMessages: [{ ...third!, content: "again" }] })),
      ).rejects.toMatchObject({ code: "STORAGE_FAILURE_001" });
    });
  });

  it("refuses to continue a head of a thread another connection deleted and created again", async () => {
    await twoConnections(async (ours, peer) => {
      const threadId = `heads-${randomUUID()}`;
      await ours.putCheckpoint(newThreadWrite(threadId, { newMessages: [Message.user("a")] }));
      await peer.deleteThread(threadId);
      const again = newThreadWrite(threadId, { incarnation: "second-life" });
      await peer.putCheckpoint({ ...again, newMessages: [Message.user("b")] });

      const step = { ...newThreadWrite(threadId), expectedVersion: 1 };
      await expect(ours.putCheckpoint(step)).rejects.toMatchObject({
        code: "STORAGE_CONFLICT_001",
      });
      expect(await ours.putCheckpoint({ ...step, incarnation: "second-life" })).toBe(2);
      expect((await ours.listMessages(threadId)).map((m) => m.content)).toEqual(["b"]);
    });
  });
});
