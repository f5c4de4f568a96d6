import { mkdtemp } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestServer, type ServerCommand } from "./test-server.js";

/** Options for {@link RedisServer.start}. */
export interface RedisServerOptions {
  /** Goes into the temporary directory's name, to tell servers apart when debugging. */
  name?: string;
}

/**
 * A private Redis server for tests: no persistence (no RDB, no AOF), listening on 127.0.0.1
 * only, its working directory and log in a temporary directory. It can be stopped, killed and
 * started again on the same port; being memory-only, it comes back empty.
 */
export class RedisServer extends TestServer {
  protected readonly stopSignal = "SIGTERM";

  private constructor(rootDir: string) {
    super(rootDir);
  }

  /** Starts a server on a free port; resolves once it answers PING. */
  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const rootDir = await mkdtemp(join(tmpdir(), `tenxgraph-redis-${options.name ?? "test"}-`));
    const server = new RedisServer(rootDir);
    try {
      await server.startOnFreePort();
      return server;
    } catch (error) {
      await server.destroy();
      throw error;
    }
  }

  /** The server's URL, e.g. for ioredis: `redis://127.0.0.1:PORT`. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get logFile(): string {
    return join(this.rootDir, "server.log");
  }

  protected serverCommand(): ServerCommand {
    return {
      command: "redis-server",
      args: [
        ...["--port", String(this.port), "--bind", "127.0.0.1", "--protected-mode", "no"],
        // Memory only: tests want a clean server, and snapshots would only cost time.
        ...["--save", "", "--appendonly", "no"],
        ...["--dir", this.rootDir, "--daemonize", "no"],
      ],
    };
  }

  protected isReady(pid: number | undefined): Promise<boolean> {
    // A server still loading its data answers with a LOADING error: not ready yet.
    return redisCommand(this.url, ["INFO", "server"]).then(
      (info) => info.includes(`process_id:${pid}\r\n`),
      () => false,
    );
  }
}

/**
 * Sends PING to the Redis server at `url` and resolves with its reply (`PONG` from a healthy
 * server). Rejects if nothing listens there (ECONNREFUSED) or no reply comes in time.
 */
export async function pingRedis(url: string): Promise<string> {
  return redisCommand(url, ["PING"]);
}

/**
 * Sends one command over a plain TCP connection and resolves with the reply: the text of a
 * status, integer or bulk-string reply. An error reply rejects with its message. Array replies
 * are not read: the harness needs none, and this stays a few lines instead of a client.
 */
export async function redisCommand(
  url: string,
  args: string[],
  timeoutMs = 2_000,
): Promise<string> {
  const { hostname, port } = new URL(url);
  const request = `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = Buffer.alloc(0);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no reply from ${url}`)));
    socket.on("connect", () => socket.write(request));
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const reply = parseReply(received);
      if (!reply) return;
      socket.end();
      if (reply.error) reject(new Error(`${args[0]}: ${reply.error}`));
      else resolve(reply.value ?? "");
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`connection to ${url} closed without a reply`)));
  });
}

/** The reply in `data` if it is complete yet, else undefined (more bytes are on their way). */
function parseReply(data: Buffer): { value?: string; error?: string } | undefined {
  const lineEnd = data.indexOf("\r\n");
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(data[0] ?? 0);
  const line = data.subarray(1, lineEnd).toString("utf8");
  if (type === "-") return { error: line };
  if (type !== "$") return { value: line };
  const length = Number(line);
  if (length < 0) return {}; // the null bulk string
  const bodyStart = lineEnd + 2;
  if (data.length < bodyStart + length + 2) return undefined;
  return { value: data.subarray(bodyStart, bodyStart + length).toString("utf8") };
}
