import type { Context } from "hono";
import { z } from "zod";
import type { Route } from "../http/route-table.js";
import type { ServerEnv } from "../http/server-env.js";
import { pathId, readBody } from "../http/request-input.js";
import { streamFrames } from "../http/sse.js";
import { authorizeThread } from "../threads/ownership.js";
import type { ChatContext } from "./chat-context.js";
import { chatRequestSchema } from "./chat-request.js";
import { startChatRun } from "./chat-run.js";
import { chatTurn, continueTurn } from "./chat-turn.js";
import type { LiveChat } from "./live-chats.js";
import { UI_STREAM_HEADER, UI_STREAM_VERSION } from "./ui-message-chunk.js";

/** One chunk of the AI SDK's UI message stream, as documented (docs/ai-sdk-ui.md). */
const uiChunkResponse = z.looseObject({ type: z.string() });

const UI_STREAM = {
  description:
    "The AI SDK UI message stream (protocol v1): one chunk per SSE event, ending with [DONE]",
  schema: uiChunkResponse,
  body: "sse",
} as const;

/**
 * `POST /v1/chat` and `GET /v1/chat/{chat_id}/stream`: the AI SDK's `useChat` (its
 * `DefaultChatTransport`) talks to the graph with no adapter. The chat id is the thread id, with
 * the ownership of every thread route.
 */
export const chatRoutes: Route<ChatContext>[] = [
  {
    method: "post",
    path: "/v1/chat",
    summary: "Run the graph on the chat's thread, streaming the AI SDK UI message stream",
    body: chatRequestSchema,
    responses: { 200: UI_STREAM },
    handler: async (c, ctx) => {
      const body = await readBody(c, chatRequestSchema);
      const user = c.get("user");
      const turn = await chatTurn(ctx, user, body);
      return uiStream(c, await startChatRun(ctx, user, turn));
    },
  },
  {
    method: "get",
    path: "/v1/chat/{chat_id}/stream",
    summary:
      "Reattach to the chat's run (from its start); continue a run its server lost; 204 when none",
    responses: { 200: UI_STREAM },
    handler: async (c, ctx) => {
      const threadId = pathId(c, "chat_id");
      const user = c.get("user");
      const checkpoint = await authorizeThread(ctx.checkpointer, user, threadId, "read");
      const live = ctx.chats.get(threadId);
      if (live) return uiStream(c, live);
      // Still "running" with no run here: its server died (or this is another server); the
      // ledger makes carrying it on safe: recorded calls replay, claimed ones are fenced.
      if (checkpoint?.status !== "running") return c.body(null, 204);
      const turn = await continueTurn(ctx, threadId, checkpoint);
      return uiStream(c, await startChatRun(ctx, user, turn));
    },
  },
];

/** Answers with a live chat's frames, from its first, under the protocol's header. */
function uiStream(c: Context<ServerEnv>, chat: LiveChat): Response {
  c.header(UI_STREAM_HEADER, UI_STREAM_VERSION);
  return streamFrames(c, "text/event-stream; charset=utf-8", async (send, gone) => {
    for await (const frame of chat.read(gone)) await send(frame);
  });
}
