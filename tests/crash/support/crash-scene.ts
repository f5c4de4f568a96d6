import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Checkpointer, LedgerEntry, ThreadCheckpoint } from "@tenxgraph/core/storage";
import type { Message } from "@tenxgraph/core";
import {
  dropStore,
  freshStore,
  waitUntilUnlocked,
  type StoreServers,
} from "../../support/fresh-store.js";
import {
  durableOnly,
  openStore,
  type StoreKind,
  type StoreSpec,
} from "../../support/store-spec.js";
import {
  WorkerProcess,
  type WorkerExit,
  type WorkerMessage,
} from "../../support/worker-process.js";
import type { AgentParams, Effect } from "./agent-params.js";
import { storeLogger } from "./reporting-logger.js";
import { readEffects } from "./side-effect-log.js";
import { asVersion1 } from "./graph-versions.js";

/** The worker script every scene runs; a pool may start it early (see {@link SceneOptions}). */
export const AGENT_WORKER = new URL("./agent-worker.ts", import.meta.url);
/** A worker that neither ends nor dies within this is stuck: the test fails instead of hanging. */
const WORKER_DEADLINE_MS = 30_000;
/**
 * A test of a scene runs a few workers one after the other, each under its own deadline: the
 * test's limit only has to stay out of their way on a loaded machine, not measure speed.
 */
export const SCENE_TEST_TIMEOUT_MS = 120_000;

/** The thread `threadId` of `store` as stored, with the side-effect log `effects`. */
export async function readThread(
  store: Checkpointer,
  threadId: string,
  effects: Effect[],
): Promise<StoredThread> {
  const [checkpoint, messages, ledger] = await Promise.all([
    store.getCheckpoint(threadId),
    store.listMessages(threadId),
    store.listCalls(threadId),
  ]);
  // Read by version 1's names: a deploy's renamed tool records its calls under its new name.
  return { checkpoint, messages, ledger: ledger.map(asVersion1), effects };
}

/** One worker process from start to exit, with everything it reported. */
export interface WorkerRun {
  params: AgentParams;
  exit: WorkerExit;
  messages: WorkerMessage[];
  /** The `done` report (the run ended without a crash), if any. */
  done: WorkerMessage | undefined;
  /** The `killing` report (it killed itself at a fault point), if any. */
  killing: WorkerMessage | undefined;
  stderr: string;
  /** The stored thread version once the process was gone (set by the invariant checks). */
  versionAfter?: number;
  /**
   * The runs started together on the thread (the chaos run starts two or three at once) share
   * a wave; a run started on its own is a wave of one.
   */
  wave: string;
}

/** The thread as stored, read through a checkpointer of the test process. */
export interface StoredThread {
  checkpoint: ThreadCheckpoint | null;
  messages: Message[];
  ledger: LedgerEntry[];
  effects: Effect[];
}

/** How a scene departs from the defaults. */
export interface SceneOptions {
  /** The Redis every process of a PostgreSQL scene uses, instead of the suite's shared one. */
  redisUrl?: string;
  /** The servers a PostgreSQL scene lives on, instead of the suite's shared ones. */
  servers?: StoreServers;
  /**
   * Starts the worker process for a run (default: a new process of {@link AGENT_WORKER} with
   * the params). The chaos run hands out processes started ahead of time, so a run does not
   * wait for Node.js and the packages to load.
   */
  spawn?: (params: AgentParams) => WorkerProcess;
  /**
   * How long a worker may take before it counts as stuck (default 30 s); the chaos run gives
   * more, as it keeps the machine far busier than one test.
   */
  workerDeadlineMs?: number;
}

/**
 * One test's world: a fresh store of the kind asked for (a SQLite file, or a PostgreSQL schema
 * of its own behind Redis), a side-effect log in the OS temp folder, one thread, and every worker
 * run on it, in order (the invariants compare each run with the ones before).
 */
export class CrashScene {
  readonly dir: string;
  readonly store: StoreSpec;
  readonly effectsPath: string;
  readonly runs: WorkerRun[] = [];
  /** Workers whose run has not ended yet (a served worker goes on to other scenes' runs). */
  readonly #running = new Set<WorkerProcess>();
  #started = 0;
  readonly #base: Pick<AgentParams, "threadId" | "rounds" | "answer" | "team">;
  readonly #spawn: (params: AgentParams) => WorkerProcess;
  readonly #deadlineMs: number;

  constructor(
    name: string,
    kind: StoreKind,
    base: Pick<AgentParams, "threadId" | "rounds" | "answer" | "team">,
    options: SceneOptions = {},
  ) {
    this.dir = mkdtempSync(join(tmpdir(), `tenxgraph-crash-${name}-`));
    const store = freshStore(kind, name, this.dir, options.servers);
    this.store =
      options.redisUrl !== undefined && store.kind === "postgres"
        ? { ...store, redisUrl: options.redisUrl }
        : store;
    this.effectsPath = join(this.dir, "effects.jsonl");
    this.#base = base;
    this.#spawn = options.spawn ?? ((params) => new WorkerProcess(AGENT_WORKER, params));
    this.#deadlineMs = options.workerDeadlineMs ?? WORKER_DEADLINE_MS;
  }

  get threadId(): string {
    return this.#base.threadId;
  }

  /**
   * Starts a worker on this scene with `params` over the scene's defaults, in `wave` with the
   * other runs started at the same time (default: a wave of its own).
   */
  start(
    params: Partial<AgentParams> & Pick<AgentParams, "via" | "input">,
    wave = `solo-${this.#started}`,
  ): {
    worker: WorkerProcess;
    finished: Promise<WorkerRun>;
  } {
    const full: AgentParams = {
      ...this.#base,
      store: this.store,
      effectsPath: this.effectsPath,
      ...params,
    };
    const worker = this.#spawn(full);
    this.#started += 1;
    this.#running.add(worker);
    return { worker, finished: this.#finish(worker, full, wave) };
  }

  /** Runs a worker until it exits on its own: it completes, fails, or kills itself. */
  run(params: Partial<AgentParams> & Pick<AgentParams, "via" | "input">): Promise<WorkerRun> {
    return this.start(params).finished;
  }

  /**
   * Runs a worker to its end, killing it from outside when its params say so: once its tool
   * hangs (`hang`), or `outsideKillMs` after its first committed write. A hang that never came,
   * or a run that ended before its moment, is no kill.
   */
  async runArmed(
    params: Partial<AgentParams> & Pick<AgentParams, "via" | "input">,
  ): Promise<WorkerRun> {
    const { worker, finished } = this.start(params);
    const { hang, outsideKillMs } = params;
    if (hang !== undefined || outsideKillMs !== undefined) {
      await worker.waitForType(hang ? "hanging" : "write", 60_000).then(
        async () => {
          if (outsideKillMs) await new Promise((resolve) => setTimeout(resolve, outsideKillMs));
          await worker.kill();
        },
        () => undefined, // it exited first
      );
    }
    return finished;
  }

  /** Runs a worker and SIGKILLs it from outside once `ready` holds for what it reported. */
  async runAndKill(
    params: Partial<AgentParams> & Pick<AgentParams, "via" | "input">,
    ready: (messages: readonly WorkerMessage[]) => boolean,
  ): Promise<WorkerRun> {
    const { worker, finished } = this.start(params);
    await worker.waitFor(() => ready(worker.messages), WORKER_DEADLINE_MS);
    await worker.kill();
    return finished;
  }

  /**
   * The stored thread (the scene's, or another of its store, e.g. a subgraph's child thread),
   * its ledger and the side-effect log, as they are now: what is committed, read past any cache
   * (which the workers use, and cache-window.test.ts checks on its own).
   */
  read(threadId = this.threadId): Promise<StoredThread> {
    return this.inspect((store) => readThread(store, threadId, readEffects(this.effectsPath)));
  }

  /**
   * Runs `look` on a checkpointer of the test process that reads what is committed, without
   * touching the cache (a read through it may fill it, which an observer must not do).
   */
  async inspect<T>(look: (store: Checkpointer) => Promise<T>): Promise<T> {
    // Every worker is gone by now; one killed inside a transaction must not hold a lock still.
    await waitUntilUnlocked(this.store);
    const store = openStore(durableOnly(this.store), { logger: storeLogger() });
    try {
      return await look(store);
    } finally {
      await store.close();
    }
  }

  /**
   * Kills any worker whose run has not ended (a test that failed may leave one hanging), then
   * removes the store and the files.
   */
  async dispose(): Promise<void> {
    await Promise.all([...this.#running].map((worker) => worker.kill()));
    try {
      await dropStore(this.store);
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  /**
   * The run ends when the process exits, or, for a process that serves runs one after another
   * (started by a pool, see {@link SceneOptions.spawn}), when it reports `served`.
   */
  async #finish(worker: WorkerProcess, params: AgentParams, wave: string): Promise<WorkerRun> {
    const served = worker.waitForType("served", this.#deadlineMs).then(
      (): WorkerExit => ({ code: 0, signal: null }),
      () => new Promise<never>(() => {}), // it exited (or is stuck): the others settle the race
    );
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void worker.kill();
        reject(new Error(`worker stuck after ${this.#deadlineMs} ms\n${worker.stderr}`));
      }, this.#deadlineMs);
    });
    try {
      const exit = await Promise.race([worker.exited, served, stuck]);
      // This run's list: a served worker starts a new one with its next run.
      const { messages } = worker;
      const run: WorkerRun = {
        params,
        exit,
        messages,
        done: messages.find((m) => m.type === "done"),
        killing: messages.find((m) => m.type === "killing"),
        stderr: worker.stderr,
        wave,
      };
      this.runs.push(run);
      return run;
    } finally {
      this.#running.delete(worker);
      clearTimeout(timer);
    }
  }
}
