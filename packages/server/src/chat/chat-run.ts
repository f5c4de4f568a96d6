import type { StreamEvent } from "@tenxgraph/core";
import type { AuthUser } from "../http/server-env.js";
import { track } from "../http/shutdown.js";
import { prepareRun } from "../invoke/run-request.js";
import { startStream, type StartedStream } from "../invoke/run-stream.js";
import type { ChatContext } from "./chat-context.js";
import { UiChunkMaker } from "./chat-chunks.js";
import type { ChatTurn } from "./chat-turn.js";
import type { LiveChat } from "./live-chats.js";
import { SSE_DONE, sseFrame, type UiMessageChunk } from "./ui-message-chunk.js";

/**
 * Starts `turn` as a run of the graph and returns its live frames. The run is refused with its
 * status (a conflict, a bad input) before anything is sent; once started it goes on to its end
 * whether or not a client reads it: a page that reloads or loses its connection reattaches, and
 * stopping is asked for (`POST /v1/graph/stop`), not implied by a dropped connection.
 */
export async function startChatRun(
  ctx: ChatContext,
  user: AuthUser,
  turn: ChatTurn,
): Promise<LiveChat> {
  const run = await prepareRun(ctx, user, turn.input, undefined, turn.grant);
  const started = await startStream(ctx, run, turn.input.recursion_limit);
  const chat = ctx.chats.open(run.threadId);
  const maker = new UiChunkMaker(turn.earlierCalls);
  const send = (chunks: UiMessageChunk[]) => {
    for (const chunk of chunks) chat.push(sseFrame(chunk));
  };
  send(maker.start(turn.replyId));
  void track(
    ctx,
    pump(ctx, started, (event) => send(maker.fromEvent(event)), chat),
  );
  return chat;
}

/** Feeds the run's events to `send` until it ends, then closes the stream (`[DONE]`). */
async function pump(
  ctx: ChatContext,
  { run, events, early }: StartedStream,
  send: (event: StreamEvent) => void,
  chat: LiveChat,
): Promise<void> {
  try {
    for (const event of early) send(event);
    for (;;) {
      const next = await events.next();
      if (next.done) break;
      send(next.value);
    }
  } catch (error) {
    // The run's error event was sent already (an `error` chunk and a failed status).
    ctx.logger.warn({ err: error, threadId: run.threadId }, "Chat run ended with an error");
  } finally {
    chat.push(SSE_DONE);
    chat.end();
    await events.return?.(undefined);
  }
}
