import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Loop, LoopRun } from "../loop.js";
import type { HostAnswer, HostRequest, HostSpec } from "./loop-host.js";

const HOST = fileURLToPath(new URL("./loop-host.ts", import.meta.url));

/**
 * `spec`'s loop in a process of its own: its heap holds its runtime's threads alone. In one
 * process, LangGraph.js's MemorySaver (a whole checkpoint per step) grows a heap of hundreds of
 * MB, and every major GC of tenxgraph's runs then marks it: that measured the other runtime's
 * garbage, 1.3-1.6x at 50 and 200 turns. Each run is still timed inside its runtime's process
 * (the IPC is outside the timing), and the bench still takes turns between them.
 */
export async function openIsolatedLoop(host: HostSpec): Promise<Loop> {
  const child = fork(HOST, [JSON.stringify(host)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const requests = new HostRequests(child);
  await requests.ready;
  return {
    runtime: host.runtime,
    run: async (threadId) => (await requests.send({ run: threadId })).run!,
    close: async () => {
      await requests.send({ close: true });
    },
  };
}

/** The requests in flight to one host, each answered by id. */
class HostRequests {
  readonly ready: Promise<void>;
  #next = 1;
  readonly #waiting = new Map<number, (answer: HostAnswer) => void>();

  constructor(private readonly child: ChildProcess) {
    this.ready = new Promise((resolve, reject) => {
      this.#waiting.set(0, () => resolve());
      child.once("exit", (code) =>
        reject(new Error(`loop host exited (${code}) before it was ready`)),
      );
    });
    child.on("message", (answer: HostAnswer) => {
      const settle = this.#waiting.get(answer.id);
      this.#waiting.delete(answer.id);
      settle?.(answer);
    });
  }

  send(request: { run: string } | { close: true }): Promise<{ run?: LoopRun }> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, (answer) =>
        answer.error ? reject(new Error(`loop host: ${answer.error}`)) : resolve(answer),
      );
      this.child.send({ id, ...request } as HostRequest);
    });
  }
}
