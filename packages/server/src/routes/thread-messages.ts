import { Message } from "@tenxgraph/core";
import type { Hono } from "hono";
import { ApiError } from "../api-error.js";
import { ok } from "../envelope.js";
import { authorizeThread, requireThread } from "../ownership.js";
import { pathId, readBody, readQuery } from "../request-input.js";
import { configBodySchema, pageQuerySchema, putMessagesSchema } from "../schemas.js";
import type { ServerContext } from "../server-context.js";
import type { ServerEnv } from "../server-env.js";
import { editThread } from "../thread-writes.js";
import { fromWireMessage, toWireMessage } from "../wire/convert-message.js";

/** A thread's transcript: page, append, read one, delete one. */
export function threadMessageRoutes(app: Hono<ServerEnv>, ctx: ServerContext): void {
  app.get("/v1/threads/:thread_id/messages", async (c) => {
    const threadId = pathId(c, "thread_id");
    const { search, offset, limit } = readQuery(c, pageQuerySchema);
    await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "read");
    if (!search) {
      const page = await ctx.checkpointer.listMessages(threadId, { offset, limit });
      return ok(c, { messages: page.map(toWireMessage) });
    }
    const needle = search.toLowerCase();
    const all = await ctx.checkpointer.listMessages(threadId);
    const found = all.filter((m) => Message.text(m).toLowerCase().includes(needle));
    return ok(c, { messages: found.slice(offset, offset + limit).map(toWireMessage) });
  });

  app.post("/v1/threads/:thread_id/messages", async (c) => {
    const threadId = pathId(c, "thread_id");
    const user = c.get("user");
    const checkpoint = await authorizeThread(ctx.checkpointer, user, threadId, "write");
    const body = await readBody(c, putMessagesSchema);
    const messages = body.messages.map(fromWireMessage);
    const version = await editThread(ctx, user, threadId, checkpoint, { newMessages: messages });
    return ok(c, {
      success: true,
      message: "Messages put successfully",
      data: { version, message_ids: messages.map((m) => m.id) },
    });
  });

  app.get("/v1/threads/:thread_id/messages/:message_id", async (c) => {
    const threadId = pathId(c, "thread_id");
    const messageId = pathId(c, "message_id");
    await requireThread(ctx.checkpointer, c.get("user"), threadId, "read");
    const found = (await ctx.checkpointer.listMessages(threadId)).find((m) => m.id === messageId);
    if (!found)
      throw new ApiError(
        404,
        "NOT_FOUND",
        `Message '${messageId}' not found in thread '${threadId}'`,
      );
    return ok(c, toWireMessage(found));
  });

  app.delete("/v1/threads/:thread_id/messages/:message_id", async (c) => {
    const threadId = pathId(c, "thread_id");
    const messageId = pathId(c, "message_id");
    await requireThread(ctx.checkpointer, c.get("user"), threadId, "delete messages of");
    await readBody(c, configBodySchema);
    // Persisted messages are immutable: ledger keys and replays refer to them by id, so removing
    // one would make a replay answer a call that is no longer in the transcript.
    throw new ApiError(
      409,
      "MESSAGE_IMMUTABLE",
      `Message '${messageId}' cannot be deleted: tenxgraph transcripts are append-only ` +
        "(tool ledger keys refer to message ids); delete the thread instead",
      [
        {
          loc: ["path", "message_id"],
          msg: "transcripts are append-only: messages cannot be deleted one by one",
          type: "append_only",
        },
      ],
    );
  });
}
