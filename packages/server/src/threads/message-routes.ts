import type { Route } from "../http/route-table.js";
import {
  messageListResponse,
  messagesAddedResponse,
  versionDoneResponse,
  wireMessageResponse,
} from "../wire/response-schemas.js";
import type { ThreadsContext } from "./threads-context.js";
import { ok } from "../http/envelope.js";
import { pathId, readBody, readQuery } from "../http/request-input.js";
import { fromWireMessage, toWireMessage } from "../wire/convert-message.js";
import { configBodySchema, pageQuerySchema, putMessagesSchema } from "../wire/request-schemas.js";
import { authorizeThread, requireThread } from "./ownership.js";
import { refuseSubgraphThread } from "./subgraph-threads.js";
import { appendThreadMessages, deleteThreadMessage } from "./thread-edits.js";
import { findMessage, messagePage } from "./thread-listing.js";

/** A thread's transcript: page, append, read one, delete one. */
export const threadMessageRoutes: Route<ThreadsContext>[] = [
  {
    method: "get",
    path: "/v1/threads/{thread_id}/messages",
    summary: "Page the transcript",
    responses: {
      200: { description: "The thread's messages", schema: messageListResponse },
    },
    query: pageQuerySchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const query = readQuery(c, pageQuerySchema);
      await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "read");
      const page = await messagePage(ctx, threadId, query);
      return ok(c, { messages: page.map(toWireMessage) });
    },
  },
  {
    method: "post",
    path: "/v1/threads/{thread_id}/messages",
    summary: "Append messages",
    responses: {
      200: { description: "Added, at this version", schema: messagesAddedResponse },
    },
    body: putMessagesSchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const user = c.get("user");
      const checkpoint = await authorizeThread(ctx.checkpointer, user, threadId, "write");
      const body = await readBody(c, putMessagesSchema);
      const messages = body.messages.map(fromWireMessage);
      const version = await appendThreadMessages(ctx, user, threadId, checkpoint, messages);
      return ok(c, {
        success: true,
        message: "Messages put successfully",
        data: { version, message_ids: messages.map((m) => m.id) },
      });
    },
  },
  {
    method: "get",
    path: "/v1/threads/{thread_id}/messages/{message_id}",
    summary: "One message",
    responses: {
      200: { description: "The message", schema: wireMessageResponse },
    },
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const messageId = pathId(c, "message_id");
      await requireThread(ctx.checkpointer, c.get("user"), threadId, "read");
      return ok(c, toWireMessage(await findMessage(ctx, threadId, messageId)));
    },
  },
  {
    method: "delete",
    path: "/v1/threads/{thread_id}/messages/{message_id}",
    summary: "Remove the message, as the thread's next version (earlier versions keep it)",
    responses: {
      200: { description: "Deleted, at this version", schema: versionDoneResponse },
    },
    body: configBodySchema,
    handler: async (c, ctx) => {
      const threadId = pathId(c, "thread_id");
      const messageId = pathId(c, "message_id");
      const user = c.get("user");
      const checkpoint = await requireThread(
        ctx.checkpointer,
        user,
        threadId,
        "delete messages of",
      );
      refuseSubgraphThread(checkpoint, "have a message deleted");
      await readBody(c, configBodySchema);
      const version = await deleteThreadMessage(ctx, checkpoint, messageId);
      return ok(c, { success: true, message: "Message deleted successfully", data: { version } });
    },
  },
];
