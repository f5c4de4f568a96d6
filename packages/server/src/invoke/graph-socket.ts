import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { z } from "zod";
import type { Context } from "@opentelemetry/api";
import { carriedTraceContext, requestTraceContext } from "../http/trace-context.js";
import { toApiError, validationError } from "../http/api-error.js";
import { prepareRun } from "./run-request.js";
import { pumpStream, startStream } from "./run-stream.js";
import { graphInputSchema } from "../wire/request-schemas.js";
import { track } from "../http/shutdown.js";
import type { InvokeContext } from "./invoke-context.js";
import type { AuthUser } from "../http/server-env.js";
import { wireMessageSchema } from "../wire/wire-message.js";
import { originAllowed } from "../http/cors.js";
import { requireJsonDepth } from "../http/request-limits.js";
import { SocketBudget } from "./socket-limits.js";

/** Where the socket is served. */
export const GRAPH_SOCKET_PATH = "/v1/graph/ws";
/** The subprotocol 10xGraph's client offers first, with the token as the second entry. */
export const BEARER_PROTOCOL = "agentflow-bearer";

/** Close codes of the contract (§2.1 row 9); 1009: a frame larger than a request body may be. */
const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  serverError: 1011,
  tryLater: 1013,
};

/** One text frame: 10xGraph's `WsGraphInput`. `resume` runs `tool_result` as the input. */
const wsGraphInputSchema = z
  .object({
    invoke_type: z.enum(["fresh", "resume"]).default("fresh"),
    messages: z.array(wireMessageSchema).default([]),
    tool_result: z.array(wireMessageSchema).default([]),
    initial_state: z.record(z.string(), z.unknown()).nullable().optional(),
    config: z.record(z.string(), z.unknown()).nullable().optional(),
    recursion_limit: z.number().int().min(1).max(100).default(25),
    response_granularity: z.enum(["low", "partial", "full"]).default("low"),
    // A browser cannot set the upgrade's headers: a frame may carry its run's trace context.
    traceparent: z.string().max(256).optional(),
    tracestate: z.string().max(512).optional(),
  })
  .superRefine((input, ctx) => {
    if (input.invoke_type === "fresh" && input.messages.length === 0)
      ctx.addIssue({ code: "custom", path: ["messages"], message: "messages must not be empty" });
    if (input.invoke_type === "resume" && input.tool_result.length === 0)
      ctx.addIssue({ code: "custom", path: ["tool_result"], message: "must not be empty" });
    if (input.invoke_type === "resume" && !input.config?.thread_id)
      ctx.addIssue({ code: "custom", path: ["config", "thread_id"], message: "resume needs it" });
  });

/** A socket server attached to an HTTP server; `close()` ends every socket (1001). */
export interface GraphSocketServer {
  close(): void;
}

/**
 * Serves `WS /v1/graph/ws` on `server` for `app`: each text frame is a
 * run, streamed back as the same chunks as `POST /v1/graph/stream`, then `updates {"status":
 * "done"}`. Runs on one socket go one after another; closing the socket stops the one running.
 * The token comes from `Authorization`, `Sec-WebSocket-Protocol: agentflow-bearer, <token>`
 * or `?token=`; a refused one closes with 1008. `serve()` calls this; call it yourself when you
 * serve `createApp()`'s app on your own `node:http` server.
 *
 * @example
 * const app = createApp({ graph });
 * const server = serveNode({ fetch: app.fetch, port: 8000 });
 * attachGraphSocket(server, app);
 */
export function attachGraphSocket(
  server: Server,
  app: { context: InvokeContext },
): GraphSocketServer {
  const ctx = app.context;
  const sockets = new WebSocketServer({
    noServer: true,
    // A larger frame closes the socket with 1009 before it is buffered whole.
    maxPayload: ctx.maxBodyBytes,
    // Echo the sentinel when offered: the client's token rides as the second "protocol".
    handleProtocols: (offered) => (offered.has(BEARER_PROTOCOL) ? BEARER_PROTOCOL : false),
  });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== GRAPH_SOCKET_PATH) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    // Browsers do not apply CORS to WebSockets: a page on another origin is refused here.
    const header = (name: string) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const hosts = { host: header("host"), forwardedHost: header("x-forwarded-host") };
    if (!originAllowed(header("origin"), hosts, ctx.origins)) {
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => {
      session(ctx, ws, request, url, sockets.clients.size);
    });
  };
  server.on("upgrade", onUpgrade);
  return {
    close() {
      server.off("upgrade", onUpgrade);
      for (const ws of sockets.clients) ws.close(CLOSE.goingAway, "Server shutting down");
      sockets.close();
    },
  };
}

function session(
  ctx: InvokeContext,
  ws: WebSocket,
  request: IncomingMessage,
  url: URL,
  open: number,
): void {
  if (ctx.maxSockets !== null && open > ctx.maxSockets) {
    ws.close(CLOSE.tryLater, "Too many WebSocket connections");
    return;
  }
  const closed = new AbortController();
  ws.on("close", () => closed.abort());
  // A frame over `maxPayload` (closed 1009) or a broken connection: the socket closes itself.
  ws.on("error", (error) => ctx.logger.warn({ err: error }, "WebSocket closed on an error"));
  // Listening before the token is checked: the client sends its first frame on open, and a
  // frame with no listener yet would be lost.
  const handshake = handshakeRequest(request, url);
  // Read now, while the upgrade's context is active; a frame's own `traceparent` wins over it.
  const traceContext = requestTraceContext(handshake);
  const user = ctx.authenticate(handshake).catch((error: unknown) => {
    ws.close(CLOSE.policy, closeReason(toApiError(error).message));
    return null;
  });
  // Frames wait their turn within bounds; output past its bound closes the socket.
  const budget = new SocketBudget(ctx.maxBodyBytes, ctx.socketPeaks);
  const overflow = (reason: string) => {
    closed.abort();
    ws.close(CLOSE.policy, reason);
  };
  let queue: Promise<unknown> = user;
  ws.on("message", (data: RawData, isBinary: boolean) => {
    const size = frameSize(data);
    if (closed.signal.aborted) return;
    if (!budget.admit(size)) {
      overflow("Too many frames waiting: wait for each run's done before sending more");
      return;
    }
    queue = queue.then(async () => {
      budget.release(size);
      const who = await user;
      const send = (chunk: unknown) => {
        if (ws.readyState !== ws.OPEN) return;
        ws.send(JSON.stringify(chunk));
        if (!budget.outputFits(ws.bufferedAmount))
          overflow("Too much output waiting: the client is not reading");
      };
      if (who)
        await onFrame(ctx, ws, { user: who, traceContext }, data, isBinary, closed.signal, send);
    });
  });
}

function frameSize(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

/** Who opened the socket, and the trace context of its upgrade request. */
interface SocketPeer {
  user: AuthUser;
  traceContext: Context;
}

/** One frame: a run streamed back, or an error chunk; the socket stays open unless it must not. */
async function onFrame(
  ctx: InvokeContext,
  ws: WebSocket,
  peer: SocketPeer,
  data: RawData,
  isBinary: boolean,
  closed: AbortSignal,
  send: (chunk: unknown) => void,
): Promise<void> {
  if (closed.aborted) return;
  const frame = parseFrame(data, isBinary);
  if (!frame.ok) {
    send(errorChunk(null, `Invalid request: ${frame.reason}`, "VALIDATION_ERROR"));
    return;
  }
  const input = frame.input;
  let threadId: string | null = null;
  try {
    // A resume is a run whose input is the tool results, as in 10xGraph's server.
    const parsed = graphInputSchema.safeParse({
      messages: input.invoke_type === "resume" ? input.tool_result : input.messages,
      initial_state: input.invoke_type === "resume" ? null : input.initial_state,
      config: input.config,
      recursion_limit: input.recursion_limit,
      response_granularity: input.response_granularity,
    });
    if (!parsed.success) throw validationError("frame", parsed.error);
    const body = parsed.data;
    const trace = input.traceparent
      ? carriedTraceContext({
          traceparent: input.traceparent,
          ...(input.tracestate ? { tracestate: input.tracestate } : {}),
        })
      : peer.traceContext;
    const run = await prepareRun(ctx, peer.user, body, trace);
    threadId = run.threadId;
    const started = await startStream(ctx, run, body.recursion_limit);
    started.stopOn(closed);
    await track(ctx, pumpStream(ctx, started, body.response_granularity, send));
    send(started.maker.updates({ status: "done" }));
  } catch (error) {
    const apiError = toApiError(error);
    send(errorChunk(threadId, apiError.message, apiError.code));
    if (apiError.status === 403) {
      ws.close(CLOSE.policy, closeReason(apiError.message));
    } else if (apiError.status >= 500) {
      ctx.logger.error({ err: error, threadId }, "WebSocket run failed");
      ws.close(CLOSE.serverError, closeReason(apiError.message));
    } else {
      send(doneChunk(threadId));
    }
  }
}

type ParsedFrame =
  { ok: true; input: z.infer<typeof wsGraphInputSchema> } | { ok: false; reason: string };

function parseFrame(data: RawData, isBinary: boolean): ParsedFrame {
  if (isBinary) return { ok: false, reason: "frames are JSON text" };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.isBuffer(data) ? data.toString("utf8") : String(data));
  } catch (error) {
    return { ok: false, reason: `not JSON (${(error as Error).message})` };
  }
  try {
    requireJsonDepth(json, "frame");
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const parsed = wsGraphInputSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    return { ok: false, reason: issues.join("; ") };
  }
  return { ok: true, input: parsed.data };
}

/** An `error` chunk as the stream sends one (`data.reason`, and our `code`). */
function errorChunk(threadId: string | null, reason: string, code: string) {
  return {
    event: "error",
    message: null,
    state: null,
    data: { status: "error", reason, code },
    thread_id: threadId,
    run_id: null,
    metadata: threadId ? { thread_id: threadId } : {},
    timestamp: Date.now() / 1000,
  };
}

/** The end of a run that was refused before it started. */
function doneChunk(threadId: string | null) {
  return { ...errorChunk(threadId, "", ""), event: "updates", data: { status: "done" } };
}

/**
 * The handshake as a `Request` for the app's authenticator, the token moved into
 * `Authorization` when it came as the subprotocol's second entry or as `?token=`.
 */
function handshakeRequest(request: IncomingMessage, url: URL): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(", "));
  }
  if (!headers.has("authorization")) {
    const token =
      protocolToken(request.headers["sec-websocket-protocol"]) ?? url.searchParams.get("token");
    if (token) headers.set("authorization", `Bearer ${token}`);
  }
  return new Request(url, { headers });
}

/** The token of `agentflow-bearer, <token>`: exactly two entries, the sentinel first. */
function protocolToken(header: string | undefined): string | null {
  const entries = (header ?? "").split(",").map((p) => p.trim());
  return entries.length === 2 && entries[0] === BEARER_PROTOCOL && entries[1] ? entries[1] : null;
}

/** A close reason fits in 123 bytes. */
function closeReason(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return bytes.length <= 123 ? text : bytes.subarray(0, 120).toString("utf8") + "...";
}
