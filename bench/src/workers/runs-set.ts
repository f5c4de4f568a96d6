import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { END, Message, StateGraph, silentLogger } from "@tenxgraph/core";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { PgRunStore, RunEventFollower, serve, type RunningServer } from "@tenxgraph/server";
import { createDatabase } from "@tenxgraph/test-servers";
import { runSql } from "../servers/bench-servers.js";
import { BenchWorkerProcess, type WorkerMessage } from "./worker-processes.js";

/** Worker process settings a measurement starts them with. */
export interface WorkerSpec {
  nodeMs: number;
  paused?: boolean;
}

/**
 * One measurement set: a fresh database holding both the threads (PgCheckpointer) and the runs
 * (PgRunStore and graphile-worker's queue), the API (`serve()` on 127.0.0.1 in this process,
 * no auth) that runs are POSTed to, and the worker processes. Every worker's messages go to the
 * listeners of {@link onMessage}.
 */
export class RunsSet {
  readonly workers = new Set<BenchWorkerProcess>();
  readonly #listeners = new Set<(message: WorkerMessage, from: BenchWorkerProcess) => void>();
  #nextWorker = 1;

  private constructor(
    readonly name: string,
    readonly adminDsn: string,
    readonly dsn: string,
    readonly database: string,
    readonly store: PgRunStore,
    readonly checkpointer: PgCheckpointer,
    readonly follower: RunEventFollower,
    readonly server: RunningServer,
  ) {}

  static async open(adminDsn: string, name: string): Promise<RunsSet> {
    const database = `bench_workers_${name}_${randomBytes(3).toString("hex")}`;
    const dsn = await createDatabase(adminDsn, database);
    const checkpointer = new PgCheckpointer({ postgresDsn: dsn, logger: silentLogger });
    await checkpointer.setup();
    const store = new PgRunStore({ postgresDsn: dsn });
    await store.setup();
    const follower = new RunEventFollower(dsn);
    const graph = new StateGraph()
      .addNode("MAIN", () => Message.assistant("ok"))
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile({ checkpointer, logger: silentLogger });
    const server = await serve({
      graph,
      host: "127.0.0.1",
      port: 0,
      logger: silentLogger,
      runs: { store, follower },
    });
    return new RunsSet(name, adminDsn, dsn, database, store, checkpointer, follower, server);
  }

  onMessage(listener: (message: WorkerMessage, from: BenchWorkerProcess) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts `count` worker processes (concurrency 1, default timings) and waits until ready. */
  async startWorkers(count: number, spec: WorkerSpec): Promise<BenchWorkerProcess[]> {
    const started = Array.from({ length: count }, () => {
      const worker = new BenchWorkerProcess(
        {
          dsn: this.dsn,
          workerId: `bench-${this.name}-w${this.#nextWorker++}`,
          nodeMs: spec.nodeMs,
          concurrency: 1,
          paused: spec.paused ?? false,
        },
        (message, from) => {
          for (const listener of this.#listeners) listener(message, from);
        },
      );
      this.workers.add(worker);
      void worker.exited.then(() => this.workers.delete(worker));
      return worker;
    });
    await Promise.all(started.map((w) => w.ready));
    return started;
  }

  /**
   * `POST /v1/threads/{threadId}/runs` with one user message; the run's id. `enqueue` posts it
   * behind the thread's active run (its message gets an id of its own).
   */
  async postRun(threadId: string, strategy: "reject" | "enqueue" = "reject"): Promise<string> {
    const response = await fetch(`${this.server.url}/v1/threads/${threadId}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }], message_id: strategy }],
        multitask_strategy: strategy,
      }),
    });
    const body = (await response.json()) as { data?: { run_id?: string } };
    if (response.status !== 202 || typeof body.data?.run_id !== "string") {
      throw new Error(`POST run on ${threadId}: ${response.status} ${JSON.stringify(body)}`);
    }
    return body.data.run_id;
  }

  /** `GET …/runs/{runId}/join`: waits for the run's end; its wire record. */
  async join(threadId: string, runId: string): Promise<{ status: string; attempts: number }> {
    const response = await fetch(`${this.server.url}/v1/threads/${threadId}/runs/${runId}/join`);
    const body = (await response.json()) as { data: { status: string; attempts: number } };
    if (response.status !== 200) throw new Error(`join ${runId}: ${response.status}`);
    return body.data;
  }

  /**
   * Waits until the `count` runs on threads named `prefix…` have all ended, polling every
   * `pollMs`; the last one's end (`updated_at` of its row, written with its final status), epoch
   * ms on the database's clock. Throws, naming `what`, when one ended other than completed, or
   * when they have not all ended after 10 minutes.
   */
  async untilRunsEnd(prefix: string, count: number, what: string, pollMs = 50): Promise<number> {
    const giveUp = Date.now() + 10 * 60_000;
    for (;;) {
      await sleep(pollMs);
      const { rows } = await this.store.pool.query<{
        ended: string;
        completed: string;
        last: string | null;
      }>(
        `SELECT count(*) FILTER (WHERE status NOT IN ('pending', 'running')) AS ended,
                count(*) FILTER (WHERE status = 'completed') AS completed,
                extract(epoch FROM max(updated_at)) * 1000 AS last
           FROM tenxgraph_runs WHERE starts_with(thread_id, $1)`,
        [prefix],
      );
      const { ended, completed, last } = rows[0]!;
      if (Number(ended) === count) {
        if (Number(completed) !== count) {
          throw new Error(`${what}: ${completed} of ${count} runs completed`);
        }
        return Number(last);
      }
      if (Date.now() > giveUp) {
        throw new Error(`${what}: ${ended} of ${count} runs ended after 10 min`);
      }
    }
  }

  /** The database's clock now (`clock_timestamp()`), epoch ms with microseconds. */
  async dbNow(): Promise<number> {
    const { rows } = await this.store.pool.query<{ ms: string }>(
      "SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms",
    );
    return Number(rows[0]!.ms);
  }

  /** Stops the workers (SIGTERM, drain), the server and the pools, then drops the database. */
  async close(): Promise<void> {
    await Promise.all([...this.workers].map((w) => w.stop()));
    await this.server.close();
    await this.follower.close();
    await this.store.close();
    await this.checkpointer.close();
    await runSql(this.adminDsn, [`DROP DATABASE IF EXISTS "${this.database}" WITH (FORCE)`]);
  }
}

/** `measure` on a fresh {@link RunsSet} named `name`, closed (its database dropped) after. */
export async function withRunsSet<T>(
  adminDsn: string,
  name: string,
  measure: (set: RunsSet) => Promise<T>,
): Promise<T> {
  const set = await RunsSet.open(adminDsn, name);
  try {
    return await measure(set);
  } finally {
    await set.close();
  }
}
