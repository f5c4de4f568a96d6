import { fork, type ChildProcess } from "node:child_process";
import type { BenchWorkerParams } from "./bench-worker.js";

/** A message from a bench worker process. */
export interface WorkerMessage {
  type: string;
  threadId?: string;
  at?: number;
  [field: string]: unknown;
}

const SCRIPT = new URL("./bench-worker.ts", import.meta.url);

/**
 * A {@link BenchWorkerParams} worker in a child process (through tsx), its messages delivered
 * to `onMessage`. `ready` resolves once it reported ready; rejects if it exits first.
 */
export class BenchWorkerProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #stderr = "";

  constructor(
    readonly params: BenchWorkerParams,
    onMessage: (message: WorkerMessage, from: BenchWorkerProcess) => void,
  ) {
    this.child = fork(SCRIPT, [], {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, TENXGRAPH_BENCH_WORKER_PARAMS: JSON.stringify(params) },
      stdio: ["ignore", "inherit", "pipe", "ipc"],
    });
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr += chunk.toString();
      process.stderr.write(chunk);
    });
    this.exited = new Promise((resolve) =>
      this.child.on("close", (code, signal) => resolve({ code, signal })),
    );
    this.ready = new Promise((resolve, reject) => {
      this.child.on("message", (message: WorkerMessage) => {
        if (message.type === "ready") resolve();
        onMessage(message, this);
      });
      void this.exited.then((exit) =>
        reject(
          new Error(`bench worker exited (${JSON.stringify(exit)}) before ready\n${this.#stderr}`),
        ),
      );
    });
  }

  get workerId(): string {
    return this.params.workerId;
  }

  send(message: WorkerMessage): void {
    this.child.send(message);
  }

  /** SIGKILL: a crash, no drain, no flush. */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }

  /** SIGTERM (the worker drains), SIGKILL after `graceMs`; resolves once it exited. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
