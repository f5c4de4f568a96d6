import { fork } from "node:child_process";
import type { ChildProcess, SpawnOptions } from "node:child_process";
import { fileURLToPath } from "node:url";

/** How a worker process ended: its exit code, or the signal that killed it. */
export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Starts a command the way `child_process.spawn` does: e.g. a host's `spawn`, which runs it in
 * the host's network namespace (`ip netns exec` execs the command, so the IPC channel's fd
 * passes through).
 */
export type Launcher = (command: string, args: string[], options: SpawnOptions) => ChildProcess;

/** How {@link WorkerProcess} starts its process. */
export interface WorkerProcessOptions {
  /** Starts `node --import tsx <script>` through this instead of `fork`. */
  launch?: Launcher;
}

/** A message a worker sent with `process.send`: a plain object with a `type`. */
export interface WorkerMessage {
  type: string;
  [field: string]: unknown;
}

/**
 * A TypeScript script running in a child Node.js process (through tsx), talking over the IPC
 * channel. Crash and concurrency suites use it to run graphs in real processes and SIGKILL them.
 */
export class WorkerProcess {
  readonly child: ChildProcess;
  /** Every message received so far (since the current job started, see {@link startJob}), in order. */
  messages: WorkerMessage[] = [];
  /** Resolves when the process has exited, however it ended. */
  readonly exited: Promise<WorkerExit>;
  readonly #waiters = new Set<() => void>();
  #stderr = "";

  /**
   * Starts `script` with `params` (JSON) in the environment variable `TENXGRAPH_WORKER_PARAMS`,
   * forked, or through `options.launch` with an IPC channel as `fork` would give it.
   */
  constructor(script: string | URL, params: unknown = {}, options: WorkerProcessOptions = {}) {
    const env = { ...process.env, TENXGRAPH_WORKER_PARAMS: JSON.stringify(params) };
    const stdio: SpawnOptions["stdio"] = ["ignore", "inherit", "pipe", "ipc"];
    this.child = options.launch
      ? options.launch(
          process.execPath,
          ["--import", "tsx", script instanceof URL ? fileURLToPath(script) : script],
          { env, stdio },
        )
      : fork(script, [], { execArgv: ["--import", "tsx"], env, stdio });
    this.child.stderr?.on("data", (chunk: Buffer) => (this.#stderr += chunk.toString()));
    this.child.on("message", (message) => {
      this.messages.push(message as WorkerMessage);
      this.#wake();
    });
    // 'close', not 'exit': 'exit' may come before the last IPC messages are read, and a worker
    // that reports where it dies and then SIGKILLs itself must have that report counted.
    this.exited = new Promise((resolve) => {
      this.child.on("close", (code, signal) => {
        resolve({ code, signal });
        this.#wake();
      });
    });
  }

  /** What the worker wrote to stderr, for failure messages. */
  get stderr(): string {
    return this.#stderr;
  }

  /**
   * The first message (already received or still to come) for which `matches` holds. Rejects
   * if the process exits first, or after `timeoutMs`, quoting the worker's stderr.
   */
  waitFor(
    matches: (message: WorkerMessage) => boolean,
    timeoutMs = 15_000,
  ): Promise<WorkerMessage> {
    return new Promise((resolve, reject) => {
      let exitCode: WorkerExit | undefined;
      // Checked again once known: a worker that exited before this call sends no more events.
      void this.exited.then((exit) => {
        exitCode = exit;
        check();
      });
      const check = () => {
        const found = this.messages.find(matches);
        if (found) return done(() => resolve(found));
        // Only once 'close' came: until then a message sent before the exit may still arrive.
        if (exitCode) {
          const how = JSON.stringify(exitCode);
          done(() =>
            reject(new Error(`worker exited (${how}) before the awaited message\n${this.#stderr}`)),
          );
        }
      };
      const timer = setTimeout(() => {
        done(() => reject(new Error(`no awaited message after ${timeoutMs} ms\n${this.#stderr}`)));
      }, timeoutMs);
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        settle();
      };
      this.#waiters.add(check);
      check();
    });
  }

  /**
   * For a process that serves one job after another: starts a new `messages` list, so waits and
   * reports see this job's messages only (the list of the job before stays as it was, for
   * whoever holds it). Separate from {@link send}: a process still loading gets its job's
   * params only once it is ready, but whoever disrupts the job must hold the job's list from
   * the moment the job is handed out, or it waits on the old list forever.
   */
  startJob(): void {
    this.messages = [];
  }

  /** Sends `message` to the process. */
  send(message: WorkerMessage): void {
    this.child.send(message);
  }

  /** A message of `type`, as {@link waitFor}. */
  waitForType(type: string, timeoutMs?: number): Promise<WorkerMessage> {
    return this.waitFor((message) => message.type === type, timeoutMs);
  }

  /** Kills the process with SIGKILL (no cleanup, no flush: a crash) and waits for its exit. */
  async kill(): Promise<WorkerExit> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    return this.exited;
  }

  #wake(): void {
    for (const check of [...this.#waiters]) check();
  }
}

/** In a worker: the params the parent passed. */
export function workerParams<T>(): T {
  return JSON.parse(process.env.TENXGRAPH_WORKER_PARAMS ?? "{}") as T;
}

/** In a worker: sends `message` to the parent and waits until it is handed to the OS. */
export function report(message: WorkerMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error("not started as a WorkerProcess (no IPC channel)"));
    process.send(message, (error: Error | null) => (error ? reject(error) : resolve()));
  });
}
