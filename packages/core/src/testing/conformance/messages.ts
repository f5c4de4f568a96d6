import { Message } from "../../messages/message.js";
import { checkpointWrite, createThread, newThreadId } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** The transcript: append-only, in append order, paged, and stored as exact message JSON. */
export function messagesConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;
  describe("messages", () => {
    it("keeps append order across many writes", async () => {
      const checkpointer = get();
      const threadId = newThreadId();
      const created = Array.from({ length: 18 }, (_, i) => Message.user(`message ${i}`));
      // Appended newest-created first, so a store that sorts by id or createdAt fails.
      const appended = [...created].reverse();
      const pending = [...appended];
      let version = 0;
      for (let batch = 0; pending.length > 0; batch++) {
        const newMessages = pending.splice(0, batch % 4);
        version = await checkpointer.putCheckpoint(
          checkpointWrite(threadId, version, { newMessages }),
        );
      }

      const listed = await checkpointer.listMessages(threadId);
      expect(listed.map((m) => m.id)).toEqual(appended.map((m) => m.id));
      expect((await checkpointer.getCheckpoint(threadId))?.messageCount).toBe(18);
    });

    it("pages by offset and limit", async () => {
      const checkpointer = get();
      const messages = Array.from({ length: 10 }, (_, i) => Message.user(`page ${i}`));
      const threadId = await createThread(checkpointer, { newMessages: messages });
      const ids = messages.map((m) => m.id);
      const page = async (p?: { offset?: number; limit?: number }) =>
        (await checkpointer.listMessages(threadId, p)).map((m) => m.id);

      expect(await page()).toEqual(ids);
      expect(await page({})).toEqual(ids);
      expect(await page({ offset: 3 })).toEqual(ids.slice(3));
      expect(await page({ limit: 4 })).toEqual(ids.slice(0, 4));
      expect(await page({ offset: 2, limit: 5 })).toEqual(ids.slice(2, 7));
      expect(await page({ offset: 8, limit: 5 })).toEqual(ids.slice(8));
      expect(await page({ offset: 10 })).toEqual([]);
      expect(await page({ offset: 0, limit: 0 })).toEqual([]);
      expect(await page({ limit: Infinity })).toEqual(ids);
      expect(await page({ offset: 4, limit: Infinity })).toEqual(ids.slice(4));
    });

    it("round-trips message JSON exactly", async () => {
      const checkpointer = get();
      const messages: Message[] = [
        Message.system("You are terse."),
        Message.user([
          { type: "text", text: "What is in this picture? ünïcødé 😀" },
          { type: "image", url: "https://example.com/cat.png", mediaType: "image/png" },
          { type: "image", data: "aGVsbG8=", mediaType: "image/jpeg" },
          { type: "file", data: "JVBERi0=", mediaType: "application/pdf", filename: "invoice.pdf" },
        ]),
        Message.assistant(
          "Let me check.",
          [
            { id: "call_1", name: "lookup_order", arguments: '{"order_id":"4821"}' },
            { id: "call_2", name: "charge_card", arguments: '{"order_id":"4821","amount":42}' },
          ],
          { usage: { inputTokens: 12, outputTokens: 34, totalTokens: 46 } },
        ),
        Message.tool("call_1", '{"status":"shipped"}'),
        Message.tool("call_2", "card declined", { isError: true }),
        Message.tool("call_3", [{ type: "text", text: "partial" }]),
        Message.assistant(""),
        Message.user('line 1\nline 2\t"quoted" \\ slash'),
      ];
      const threadId = await createThread(checkpointer, { newMessages: messages });

      const listed = await checkpointer.listMessages(threadId);
      expect(listed).toStrictEqual(messages);
      expect(listed.every((m) => Message.is(m))).toBe(true);
    });

    it("counts appended messages in messageCount", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer, {
        newMessages: [Message.user("a"), Message.assistant("b")],
      });
      expect((await checkpointer.getCheckpoint(threadId))?.messageCount).toBe(2);

      await checkpointer.putCheckpoint(checkpointWrite(threadId, 1));
      expect((await checkpointer.getCheckpoint(threadId))?.messageCount).toBe(2);

      const three = [Message.user("c"), Message.assistant("d"), Message.user("e")];
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 2, { newMessages: three }));
      expect((await checkpointer.getCheckpoint(threadId))?.messageCount).toBe(5);
      expect(await checkpointer.listMessages(threadId)).toHaveLength(5);
      expect(await checkpointer.listMessages(threadId, { offset: 2 })).toEqual(three);
    });

    it("lists no messages for a thread that does not exist", async () => {
      expect(await get().listMessages(newThreadId())).toEqual([]);
    });
  });
}
