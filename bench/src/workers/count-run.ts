/**
 * `npm run bench:workers:count --workspace bench`: what one one-step background run costs in
 * statements, round trips and commits, end to end (POST, queue, claim, attempt events, the
 * node's checkpoint, final status, queue completion), on the API's side and on the worker's.
 * The server (`serve()`) and one `RunWorker` run in this process on pools told apart by
 * `application_name`; every `pg` query is counted by side, and the server's own view comes from
 * pg_stat_statements (statements inside functions too) and pg_walinspect (commit records).
 * The worker's timers are slowed down here so that only the runs' own work is counted; the idle
 * cost of the default timings is printed apart, per second.
 */
import pg from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { END, Message, StateGraph, silentLogger } from "@tenxgraph/core";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { PgRunStore, RunEventFollower, RunWorker, serve } from "@tenxgraph/server";
import { createDatabase } from "@tenxgraph/test-servers";
import { shorten } from "../accounting/count-round-trips.js";
import { PgObserver } from "../accounting/pg-observer.js";
import { runSql, startObservablePostgres } from "../servers/bench-servers.js";

const RUNS = 20;
const IDLE_SECONDS = 5;

type Side = "server" | "worker";
const counts: Record<Side, Record<string, number>> = { server: {}, worker: {} };
let counting = false;

/** Counts every query by the side its connection belongs to (its `application_name`). */
function countQueries(): void {
  const proto = pg.Client.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const original = proto.query!;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const side = (this as unknown as { connectionParameters: { application_name?: string } })
      .connectionParameters.application_name as Side | undefined;
    if (counting && (side === "server" || side === "worker")) {
      const config = args[0];
      const text =
        typeof config === "string" ? config : String((config as { text?: string })?.text ?? "?");
      const key = shorten(text);
      counts[side][key] = (counts[side][key] ?? 0) + 1;
    }
    return original.apply(this, args);
  };
}

function oneStepGraph(checkpointer: PgCheckpointer) {
  return new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
}

function print(title: string, bySql: Record<string, number>, per: number): number {
  const total = Object.values(bySql).reduce((a, b) => a + b, 0);
  console.log(`\n${title}: ${(total / per).toFixed(2)}`);
  for (const [sql, n] of Object.entries(bySql).sort((a, b) => b[1] - a[1])) {
    console.log(`  ${(n / per).toFixed(2).padStart(6)}  ${sql}`);
  }
  return total / per;
}

const server = await startObservablePostgres("workers-count");
try {
  const dsn = await createDatabase(server.dsn, "count_run");
  await runSql(dsn, ["CREATE EXTENSION pg_stat_statements", "CREATE EXTENSION pg_walinspect"]);
  const withName = (name: Side) => `${dsn}${dsn.includes("?") ? "&" : "?"}application_name=${name}`;
  const apiCheckpointer = new PgCheckpointer({ postgresDsn: withName("server") });
  const apiStore = new PgRunStore({ postgresDsn: withName("server") });
  const follower = new RunEventFollower(withName("server"));
  const api = await serve({
    graph: oneStepGraph(apiCheckpointer),
    host: "127.0.0.1",
    port: 0,
    logger: silentLogger,
    runs: { store: apiStore, follower },
  });
  const checkpointer = new PgCheckpointer({ postgresDsn: withName("worker") });
  const store = new PgRunStore({ postgresDsn: withName("worker") });
  await Promise.all([apiCheckpointer.setup(), apiStore.setup(), checkpointer.setup()]);
  const observer = await PgObserver.open(dsn);
  countQueries();

  const post = async (threadId: string): Promise<string> => {
    const response = await fetch(`${api.url}/v1/threads/${threadId}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      }),
    });
    const body = (await response.json()) as { data: { run_id: string } };
    return body.data.run_id;
  };
  const poll = new pg.Pool({ connectionString: dsn, max: 1 });
  poll.on("error", () => {});
  const ended = async (runId: string): Promise<void> => {
    for (;;) {
      const { rows } = await poll.query<{ status: string }>(
        "SELECT status FROM tenxgraph_runs WHERE run_id = $1",
        [runId],
      );
      if (rows[0] && !["pending", "running"].includes(rows[0].status)) return;
      await sleep(5);
    }
  };

  // Timers slowed so that nothing but the runs is counted: no heartbeat, sweep or poll fires.
  const worker = new RunWorker({
    graph: oneStepGraph(checkpointer),
    store,
    heartbeatMs: 600_000,
    staleAfterMs: 1_200_000,
    pollIntervalMs: 600_000,
    logger: silentLogger,
  });
  await worker.start();
  await ended(await post("warm-up"));
  await sleep(200);

  await observer.resetStatementStats();
  const walFrom = await observer.walPosition();
  counting = true;
  for (let i = 0; i < RUNS; i++) {
    await ended(await post(`count-${i}`));
    // The worker's queue completion and its next look for a job land after the final write.
    await sleep(100);
  }
  counting = false;
  const walTo = await observer.walPosition();
  const statements = await observer.statementStats();
  const commits = await observer.commitsBetween(walFrom, walTo);
  await worker.drain();

  console.log(`One one-step background run (${RUNS} runs, POST to queue completion), per run:`);
  const serverTrips = print("Round trips, API server side", counts.server, RUNS);
  const workerTrips = print("Round trips, worker side", counts.worker, RUNS);
  console.log(`\nRound trips in all: ${(serverTrips + workerTrips).toFixed(2)}`);
  console.log(`Commit records in the WAL (writing transactions): ${(commits ?? NaN) / RUNS}`);
  const executed: Record<string, number> = {};
  const executedMs: Record<string, number> = {};
  for (const s of statements ?? []) {
    const key = `${s.nested ? "↳ " : ""}${shorten(s.sql)}`;
    executed[key] = (executed[key] ?? 0) + s.calls;
    executedMs[key] = (executedMs[key] ?? 0) + s.totalMs;
  }
  // Events written by one statement share its transaction's `created_at`.
  const batches = await poll.query<{ types: string }>(
    `SELECT string_agg(event->>'type', ' ' ORDER BY seq) AS types FROM tenxgraph_run_events
      WHERE run_id = (SELECT run_id FROM tenxgraph_runs ORDER BY created_at DESC LIMIT 1)
      GROUP BY created_at ORDER BY min(seq)`,
  );
  console.log(`\nThe last run's events, one line per statement that wrote them:`);
  for (const { types } of batches.rows) console.log(`  ${types}`);
  print("Statements PostgreSQL executed (pg_stat_statements, ↳ nested)", executed, RUNS);
  print("Their execution time, ms (nested time is inside its caller's too)", executedMs, RUNS);

  // The idle cost of the default timings, for one worker.
  const idle = new PgRunStore({ postgresDsn: withName("worker") });
  const idleWorker = new RunWorker({
    graph: oneStepGraph(checkpointer),
    store: idle,
    logger: silentLogger,
  });
  await idleWorker.start();
  await sleep(1000);
  counts.worker = {};
  counting = true;
  await sleep(IDLE_SECONDS * 1000);
  counting = false;
  print("Idle worker, default timings, round trips per second", counts.worker, IDLE_SECONDS);
  await idleWorker.drain();

  await api.close();
  await follower.close();
  await Promise.all([apiStore.close(), store.close(), idle.close()]);
  await Promise.all([apiCheckpointer.close(), checkpointer.close()]);
  await observer.close();
  await poll.end();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await server.destroy();
}
