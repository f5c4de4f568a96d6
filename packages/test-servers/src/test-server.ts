import { rm } from "node:fs/promises";
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

/** Attempts at a fresh port when another process took the one we picked before we bound it. */
const PORT_ATTEMPTS = 3;

/** How a server's process is started. */
export interface ServerCommand {
  command: string;
  args: string[];
  /** Who the process runs as (PostgreSQL refuses root); the current user when absent. */
  user?: { uid: number; gid: number };
}

/**
 * A private server process for tests, in a temporary directory of its own, on a port of
 * 127.0.0.1 that stays the same across stop/start and kill/start. A subclass says how its
 * server is started, where it logs and how to tell it is ready.
 */
export abstract class TestServer {
  /** The temporary directory: the server's working directory. */
  readonly rootDir: string;
  #port = 0;
  #process: LoggedProcess | undefined;

  protected constructor(rootDir: string) {
    this.rootDir = rootDir;
  }

  /** The file the server writes its log to. */
  abstract get logFile(): string;

  /** The TCP port on 127.0.0.1. */
  get port(): number {
    return this.#port;
  }

  /** True while the server process is running. */
  get running(): boolean {
    return this.#process !== undefined;
  }

  /** Starts the server again on the same port (after `stop` or `kill`); no-op if running. */
  async start(): Promise<void> {
    if (this.#process) return;
    const logStart = logSize(this.logFile);
    const { command, args, user } = this.serverCommand();
    this.#process = startLogged({
      command,
      args,
      ...(user ? { user } : {}),
      logFile: this.logFile,
      cwd: this.rootDir,
    });
    const pid = this.#process.child.pid;
    try {
      await waitUntilReady(
        this.#process,
        () => this.isReady(pid),
        () => logTail(this.logFile, logStart),
      );
    } catch (error) {
      await this.kill();
      throw error;
    }
  }

  /** Shuts the server down the way it asks for, and resolves once it is gone. */
  async stop(): Promise<void> {
    await this.signal(this.stopSignal);
  }

  /** SIGKILLs the server, as a crash would, and resolves once it is gone. */
  async kill(): Promise<void> {
    await this.signal("SIGKILL");
  }

  /** Stops the server (if running) and deletes its directory. */
  async destroy(): Promise<void> {
    try {
      await this.stop();
    } finally {
      await rm(this.rootDir, { recursive: true, force: true });
    }
  }

  /** The signal that shuts the server down cleanly. */
  protected abstract readonly stopSignal: NodeJS.Signals;

  protected abstract serverCommand(): ServerCommand;

  /**
   * True once the server answers and is process `pid`: an answer alone could come from another
   * server that took the port first, while ours is still failing to bind it.
   */
  protected abstract isReady(pid: number | undefined): Promise<boolean>;

  /**
   * Sends `signal` to the server and resolves once it is gone. `before` runs first, with the
   * server's pid, for a server whose worker processes must be dealt with too.
   */
  protected async signal(signal: NodeJS.Signals, before?: (pid: number) => void): Promise<void> {
    const server = this.#process;
    const pid = server?.child.pid;
    if (!server || pid === undefined) return;
    before?.(pid);
    server.child.kill(signal);
    await waitForExit(server);
    this.#process = undefined;
  }

  /** Picks a port and starts; picks again if another process bound the port first. */
  protected async startOnFreePort(): Promise<void> {
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
}
