/**
 * `npm run bench:workers:queues --workspace bench`: what the queue table costs each job
 * pick-up. graphile-worker's `get_job` locks every queue row that no job holds, for the jobs
 * in a queue: a thread's first run has a job in no queue, and a run posted behind an active
 * one waits in its thread's queue. One warm worker process runs one-step runs queued up front
 * on distinct threads, with the table as a new deployment has it, with 10,000 idle queues that
 * earlier threads left (as every deployment kept them before workers collected them), the same
 * after a collection, with a backlog of 1,000 runs waiting instead of 150, and with 500 threads
 * of two runs each, the second queued behind the first (a queue per thread with a run waiting,
 * which no collection can remove). Runs per second, PostgreSQL's CPU per run, and the WAL a
 * run writes with the row locks in it (each lock `get_job` takes is a `Heap/LOCK` record),
 * medians over the rounds. A worker collects idle queues every 5 heartbeats (5 s), and the
 * queues of the jobs it completes about 100 ms later: a round that lasts longer than 5 s with
 * 10,000 idle queues has them collected part of the way (its seconds are printed).
 */
import { postgresCpuMs } from "../accounting/cpu-sampler.js";
import { PgObserver } from "../accounting/pg-observer.js";
import { startObservablePostgres } from "../servers/bench-servers.js";
import { median } from "../measure/median.js";
import { postRuns, warmUp } from "./measure-throughput.js";
import { withRunsSet } from "./runs-set.js";

interface Scenario {
  name: string;
  idleQueues: number;
  collectFirst: boolean;
  runs: number;
  /** Runs per thread: the first in no queue, the others queued behind it. */
  perThread?: 2;
}

const SCENARIOS: Scenario[] = [
  { name: "a new deployment", idleQueues: 0, collectFirst: false, runs: 150 },
  { name: "10,000 idle queues", idleQueues: 10_000, collectFirst: false, runs: 150 },
  {
    name: "10,000 idle queues, collected first",
    idleQueues: 10_000,
    collectFirst: true,
    runs: 150,
  },
  { name: "a backlog of 1,000 runs", idleQueues: 0, collectFirst: false, runs: 1000 },
  {
    name: "1,000 runs, two on each thread",
    idleQueues: 0,
    collectFirst: false,
    runs: 1000,
    perThread: 2,
  },
];
const ROUNDS = 3;
const WARMUP_RUNS = 150;

interface PickupRound {
  runsPerSecond: number;
  postgresMsPerRun: number;
  walBytesPerRun: number;
  rowLocksPerRun: number;
  seconds: number;
}

const server = await startObservablePostgres("bench-queue-pickup");
const observer = await PgObserver.open(server.dsn);
const results = new Map<string, PickupRound[]>();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const scenario of SCENARIOS) {
      const result = await withRunsSet(server.dsn, "pickup", async (set) => {
        const processes = await set.startWorkers(1, { nodeMs: 0, paused: true });
        await warmUp(set, processes, WARMUP_RUNS);
        await set.store.collectIdleQueues(); // the warm-up's own
        await set.store.pool.query(
          `INSERT INTO graphile_worker._private_job_queues (queue_name)
           SELECT 'tenxgraph:thread:earlier-' || n FROM generate_series(1, $1::int) AS n`,
          [scenario.idleQueues],
        );
        if (scenario.collectFirst) await set.store.collectIdleQueues();
        if (scenario.perThread) {
          const threads = scenario.runs / scenario.perThread;
          await postRuns(set, "pick-", threads);
          for (let n = 0; n < threads; n++) await set.postRun(`pick-${n}`, "enqueue");
        } else {
          await postRuns(set, "pick-", scenario.runs);
        }
        const cpuAtGo = postgresCpuMs(server.dataDir)!;
        const walAtGo = await observer.walPosition();
        const goAt = Date.now();
        for (const worker of processes) worker.send({ type: "go" });
        await set.untilRunsEnd("pick-", scenario.runs, "queue pick-up", 20);
        const seconds = (Date.now() - goAt) / 1000;
        const cpu = postgresCpuMs(server.dataDir)! - cpuAtGo;
        const walAtEnd = await observer.walPosition();
        const locks = await observer.walRecordsBetween(walAtGo, walAtEnd, "Heap/LOCK");
        return {
          seconds,
          runsPerSecond: scenario.runs / seconds,
          postgresMsPerRun: cpu / scenario.runs,
          walBytesPerRun: (await observer.walBytesBetween(walAtGo, walAtEnd)) / scenario.runs,
          rowLocksPerRun: (locks ?? NaN) / scenario.runs,
        };
      });
      results.set(scenario.name, [...(results.get(scenario.name) ?? []), result]);
    }
  }
} finally {
  await observer.close();
  await server.destroy();
}

console.log(
  `\nOne warm worker, runs queued up front on distinct threads (${ROUNDS} rounds, medians):\n`,
);
console.log(
  "| queue table | runs | runs/s | PostgreSQL CPU ms/run | WAL bytes/run | row locks/run | seconds each round |",
);
console.log("|---|---|---|---|---|---|---|");
for (const scenario of SCENARIOS) {
  const rounds = results.get(scenario.name)!;
  const of = (pick: (r: PickupRound) => number, digits: number) =>
    median(rounds.map(pick)).toFixed(digits);
  console.log(
    `| ${scenario.name} | ${scenario.runs} | ${of((r) => r.runsPerSecond, 1)} | ` +
      `${of((r) => r.postgresMsPerRun, 2)} | ${of((r) => r.walBytesPerRun, 0)} | ` +
      `${of((r) => r.rowLocksPerRun, 0)} | ${rounds.map((r) => r.seconds.toFixed(1)).join(", ")} |`,
  );
}
