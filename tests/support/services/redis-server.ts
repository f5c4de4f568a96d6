import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ServerExitedError,
  freePort,
  logSize,
  logTail,
  startLogged,
  waitForExit,
  waitUntilReady,
} from "./server-process.js";
import type { LoggedProcess } from "./server-process.js";

/** Options for {@link RedisServer.start}. */
export interface RedisServerOptions {
  /** Goes into the temporary directory's name, to tell servers apart when debugging. */
  name?: string;
}

/** Attempts at a fresh port when another process took the one we picked before we bound it. */
const PORT_ATTEMPTS = 3;

/**
 * A private Redis server for tests: no persistence (no RDB, no AOF), listening on 127.0.0.1
 * only, its working directory and log in a temporary directory. It can be stopped, killed and
 * started again on the same port; being memory-only, it comes back empty.
 */
export class RedisServer {
  /** The temporary directory: the server's working directory and its `server.log`. */
  readonly rootDir: string;
  #port = 0;
  #process: LoggedProcess | undefined;

  private constructor(rootDir: string) {
    this.rootDir = rootDir;
  }

  /** Starts a server on a free port; resolves once it answers PING. */
  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const rootDir = await mkdtemp(join(tmpdir(), `tenxgraph-redis-${options.name ?? "test"}-`));
    const server = new RedisServer(rootDir);
    try {
      await server.#startOnFreePort();
      return server;
    } catch (error) {
      await server.destroy();
      throw error;
    }
  }

  /** The TCP port on 127.0.0.1; it stays the same across stop/start and kill/start. */
  get port(): number {
    return this.#port;
  }

  /** The server's URL, e.g. for ioredis: `redis://127.0.0.1:PORT`. */
  get url(): string {
    return `redis://127.0.0.1:${this.#port}`;
  }

  /** The file the server writes its log to. */
  get logFile(): string {
    return join(this.rootDir, "server.log");
  }

  /** True while the server process is running. */
  get running(): boolean {
    return this.#process !== undefined;
  }

  /** Starts the server again on the same port (after `stop` or `kill`); no-op if running. */
  async start(): Promise<void> {
    if (this.#process) return;
    const logStart = logSize(this.logFile);
    this.#process = startLogged({
      command: "redis-server",
      args: this.#serverArgs(),
      logFile: this.logFile,
      cwd: this.rootDir,
    });
    const pid = this.#process.child.pid;
    try {
      await waitUntilReady(
        this.#process,
        () => answersAs(this.url, pid),
        () => logTail(this.logFile, logStart),
      );
    } catch (error) {
      await this.kill();
      throw error;
    }
  }

  /** Shuts the server down (SIGTERM) and resolves once it is gone. */
  async stop(): Promise<void> {
    await this.#signal("SIGTERM");
  }

  /** SIGKILLs the server, as a crash would, and resolves once it is gone. */
  async kill(): Promise<void> {
    await this.#signal("SIGKILL");
  }

  /** Stops the server (if running) and deletes its directory. */
  async destroy(): Promise<void> {
    try {
      await this.stop();
    } finally {
      await rm(this.rootDir, { recursive: true, force: true });
    }
  }

  async #signal(signal: NodeJS.Signals): Promise<void> {
    const server = this.#process;
    if (!server) return;
    server.child.kill(signal);
    await waitForExit(server);
    this.#process = undefined;
  }

  /** Picks a port and starts; picks again if another process bound the port first. */
  async #startOnFreePort(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      this.#port = await freePort();
      try {
        return await this.start();
      } catch (error) {
        const portTaken =
          error instanceof ServerExitedError && error.details.includes("Address already in use");
        if (!portTaken || attempt === PORT_ATTEMPTS) throw error;
      }
    }
  }

  #serverArgs(): string[] {
    return [
      ...["--port", String(this.#port), "--bind", "127.0.0.1", "--protected-mode", "no"],
      // Memory only: tests want a clean server, and snapshots would only cost time.
      ...["--save", "", "--appendonly", "no"],
      ...["--dir", this.rootDir, "--daemonize", "no"],
    ];
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

/**
 * True once the server answers and is this very process: a PONG alone could come from another
 * server that took the port first, while ours is still failing to bind it.
 */
async function answersAs(url: string, pid: number | undefined): Promise<boolean> {
  // A server still loading its data answers with a LOADING error: not ready yet.
  return redisCommand(url, ["INFO", "server"]).then(
    (info) => info.includes(`process_id:${pid}\r\n`),
    () => false,
  );
}
