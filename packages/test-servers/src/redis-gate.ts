import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A TCP proxy in front of Redis that can stop one command of the store's cache from getting
 * through: the Redis update of a given thread version. Workers that connect through it are then
 * left exactly between a step's commit in PostgreSQL and the update of Redis that follows it, a
 * moment no fault point marks, so the test can SIGKILL them there, or let the update land late.
 */
export class RedisGate {
  readonly #server: Server;
  readonly #target: URL;
  readonly #sockets = new Set<Socket>();
  #watch: { pattern: RegExp; reached: () => void } | undefined;
  /** Sends on what each holding connection kept back. */
  readonly #held = new Set<() => void>();

  private constructor(server: Server, target: URL) {
    this.#server = server;
    this.#target = target;
    server.on("connection", (client) => this.#relay(client));
  }

  /** A gate on 127.0.0.1 in front of the Redis at `redisUrl`; everything passes until told. */
  static async open(redisUrl: string): Promise<RedisGate> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    return new RedisGate(server, new URL(redisUrl));
  }

  /** Where the workers point their `redisUrl`. */
  get url(): string {
    const address = this.#server.address();
    if (address === null || typeof address === "string") throw new Error("gate not listening");
    return `redis://127.0.0.1:${address.port}`;
  }

  /**
   * Holds back the cache update that stores `version` of `threadId`, and everything its client
   * sends after it; resolves once that update reached the gate (its PostgreSQL commit is done).
   */
  holdUpdate(threadId: string, version: number): Promise<void> {
    // The update is a script call whose key is the thread's hash and whose first argument is
    // the version: `…thread:<id>` then `$<length>` and `<version>`, as RESP bulk strings.
    const key = `thread:${escapeRegExp(threadId)}\r\n`;
    const pattern = new RegExp(`${key}\\$${String(version).length}\r\n${version}\r\n`);
    return new Promise((reached) => (this.#watch = { pattern, reached }));
  }

  /** Lets the held update, and everything its client sent after it, through to Redis. */
  release(): void {
    for (const send of this.#held) send();
    this.#held.clear();
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #relay(client: Socket): void {
    const upstream = connect({ host: this.#target.hostname, port: Number(this.#target.port) });
    this.#track(client, upstream);
    this.#track(upstream, client);
    upstream.pipe(client);
    // Commands are small; a window of what came lately catches one split across two chunks.
    let recent = "";
    let held: Buffer[] | undefined;
    client.on("data", (chunk: Buffer) => {
      if (held) {
        held.push(chunk);
        return;
      }
      recent = (recent + chunk.toString("latin1")).slice(-4096);
      const watch = this.#watch;
      if (watch?.pattern.test(recent)) {
        const kept = [chunk];
        held = kept;
        this.#held.add(() => {
          held = undefined;
          recent = "";
          for (const part of kept) upstream.write(part);
        });
        this.#watch = undefined;
        watch.reached();
        return;
      }
      upstream.write(chunk);
    });
  }

  /** Either side closing or failing ends the pair: a killed worker's connection just goes. */
  #track(socket: Socket, peer: Socket): void {
    this.#sockets.add(socket);
    socket.on("error", () => peer.destroy());
    socket.on("close", () => {
      this.#sockets.delete(socket);
      peer.destroy();
    });
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
