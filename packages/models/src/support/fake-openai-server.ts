import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * One answer the fake server gives: a JSON or raw body with a status and headers, or an SSE
 * stream of chunks. `delayMs` holds the answer back (a slow provider); `hangUp` closes the
 * socket without an answer (a network failure); `cut` destroys the socket after the chunks,
 * without ending the body (a connection dropped mid-stream).
 */
export type FakeReply =
  | { status?: number; headers?: Record<string, string>; json: unknown; delayMs?: number }
  | { status?: number; headers?: Record<string, string>; raw: string; delayMs?: number }
  | { sse: (object | string)[]; delayMs?: number; endWithDone?: boolean; cut?: boolean }
  | { hangUp: true };

/** A request the fake server received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  /** The client closed the connection before the answer was complete (a timeout, an abort). */
  abandoned: boolean;
}

/** Chooses the reply to the `index`-th request (0-based). */
export type Responder = (request: ReceivedRequest, index: number) => FakeReply;

/**
 * An OpenAI-compatible chat completions endpoint on 127.0.0.1 (a real `node:http` server on a
 * free port) that answers with recorded bodies and SSE streams, so the real provider clients
 * go over the wire without network. It keeps every request for assertions.
 */
export class FakeOpenAIServer {
  readonly requests: ReceivedRequest[] = [];
  readonly #server: Server;
  readonly #respond: Responder;
  readonly #timers = new Set<NodeJS.Timeout>();
  #port = 0;

  private constructor(respond: Responder) {
    this.#respond = respond;
    this.#server = createServer((req, res) => void this.#handle(req, res));
  }

  /**
   * Starts a server answering from a list (the n-th request gets the n-th reply; requests past
   * the end get a 500 that names the problem) or from a function.
   */
  static async start(replies: FakeReply[] | Responder): Promise<FakeOpenAIServer> {
    const respond: Responder = Array.isArray(replies)
      ? (_request, index) => replies[index] ?? noReplyLeft(index, replies.length)
      : replies;
    const server = new FakeOpenAIServer(respond);
    await new Promise<void>((resolve) => server.#server.listen(0, "127.0.0.1", resolve));
    server.#port = (server.#server.address() as AddressInfo).port;
    return server;
  }

  /** Base URL of the API, as providers expect it (`…/v1`). */
  get baseURL(): string {
    return `http://127.0.0.1:${this.#port}/v1`;
  }

  /** Requests to the chat completions endpoint. */
  get chatRequests(): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === "/v1/chat/completions");
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const request: ReceivedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      abandoned: false,
    };
    const index = this.requests.push(request) - 1;
    const reply = this.#respond(request, index);
    if ("hangUp" in reply) {
      req.socket.destroy();
      return;
    }
    const closed = new Promise<void>((resolve) =>
      res.on("close", () => {
        if (!res.writableFinished) request.abandoned = true;
        resolve();
      }),
    );
    // A client that gives up while the answer is held back ends the wait.
    if (reply.delayMs) await Promise.race([this.#wait(reply.delayMs), closed]);
    if (request.abandoned || res.destroyed) return;
    if ("sse" in reply && reply.cut) writeCutStream(res, reply.sse);
    else if ("sse" in reply) writeStream(res, reply.sse, reply.endWithDone ?? true);
    else writeBody(res, reply);
  }

  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }
}

function noReplyLeft(index: number, count: number): FakeReply {
  return {
    status: 500,
    json: {
      error: {
        message: `fake server: request ${index + 1} arrived but only ${count} replies were recorded`,
        type: "test_error",
      },
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function writeBody(
  res: ServerResponse,
  reply: { status?: number; headers?: Record<string, string>; json: unknown } | { raw: string },
): void {
  const isJson = "json" in reply;
  const body = isJson ? JSON.stringify(reply.json) : reply.raw;
  const status = ("status" in reply ? reply.status : undefined) ?? 200;
  res.writeHead(status, {
    "content-type": isJson ? "application/json" : "text/html; charset=utf-8",
    ...("headers" in reply ? reply.headers : {}),
  });
  res.end(body);
}

/** Writes chunks as OpenAI does: `data: <json>` events, then `data: [DONE]`. */
function writeStream(res: ServerResponse, chunks: (object | string)[], endWithDone: boolean): void {
  writeEvents(res, chunks);
  if (endWithDone) res.write("data: [DONE]\n\n");
  res.end();
}

/** Writes the chunks, then destroys the socket once they are sent: the body never ends. */
function writeCutStream(res: ServerResponse, chunks: (object | string)[]): void {
  writeEvents(res, chunks, () => res.socket?.destroy());
}

/** Writes the head and the chunks as `data:` events; `onWritten` runs once all are sent. */
function writeEvents(
  res: ServerResponse,
  chunks: (object | string)[],
  onWritten?: () => void,
): void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const events = chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`);
  res.write(events.join(""), onWritten);
}
