import { refuseSubgraphThread } from "./subgraph-threads.js";
import { Message } from "@tenxgraph/core";
import type { Hono } from "hono";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { authorizeThread, requireThread } from "./ownership.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import { configBodySchema, pageQuerySchema, putMessagesSchema } from "../wire/request-schemas.js";
import type { ServerContext } from "../http/server-context.js";
import type { ServerEnv } from "../http/server-env.js";
import { editThread } from "./thread-edits.js";
import { refusePrivilegedEdit } from "./state-edit-policy.js";
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
    refusePrivilegedEdit(ctx.stateEdits, user, { messages });
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
    const checkpoint = await requireThread(
      ctx.checkpointer,
      c.get("user"),
      threadId,
      "delete messages of",
    );
    refuseSubgraphThread(checkpoint, "have a message deleted");
    await readBody(c, configBodySchema);
    // A new version without the message; the versions before it keep it (nothing stored is
    // rewritten), and the ledger keeps its calls, so removing one never lets a call run twice.
    const state = await ctx.graph.getState({ threadId });
    if (!state?.values.messages.some((message) => message.id === messageId)) {
      throw new ApiError(
        404,
        "NOT_FOUND",
        `Message '${messageId}' not found in thread '${threadId}'`,
      );
    }
    const version = await ctx.graph.updateState(
      { threadId },
      { messages: [Message.remove(messageId)] },
    );
    return ok(c, { success: true, message: "Message deleted successfully", data: { version } });
  });
}
