import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { buildApp, runOnce, type Workload } from "../tenxgraph/react-loop.js";
import { countStatements } from "./count-statements.js";
import { readWalCommits } from "./read-wal-commits.js";

/** What the store did for a workload, per node step, counted on a fresh file. */
export interface StoreAccount {
  /** Runs of the workload counted (short loops run several times, so the file grows enough). */
  runs: number;
  steps: number;
  statementsPerStep: number;
  /** Committed transactions in the WAL, per step. */
  commitsPerStep: number;
  /** Pages (WAL frames) a commit writes, on average: what each commit has to fsync. */
  pagesPerCommit: number;
  /** WAL bytes written per step (frames with their headers). */
  walBytesPerStep: number;
  /** Growth of the database file per step, after a checkpoint that empties the WAL. */
  bytesPerStep: number;
  /** The same growth split by table and index (dbstat page bytes), per step. */
  bytesPerStepByTable: Record<string, number>;
  /** Executions per step of each statement, keyed by its first words. */
  statementsPerStepBySql: Record<string, number>;
}

const WAL_FRAME_HEADER_BYTES = 24;

/**
 * Runs the workload on a fresh SQLite file and counts, per step, the statements executed, the
 * transactions committed and the bytes the file grows by. Untimed: the counting slows the store.
 * Short loops are run again until the runs take at least `minSteps` steps, so that whole pages
 * fill up and the bytes per step are not a page's rounding.
 */
export async function accountStore(
  workload: Workload,
  synchronous: "FULL" | "NORMAL",
  path: string,
  minSteps: number,
): Promise<StoreAccount> {
  const checkpointer = new SqliteCheckpointer({ path, synchronous });
  await checkpointer.setup();
  const observer = new Database(path);
  try {
    checkpointWal(observer);
    const sizeBefore = statSync(path).size;
    const tablesBefore = tableBytes(observer);
    const app = buildApp(workload, checkpointer);
    const runs = Math.ceil(minSteps / (workload.turns * 2 + 1));
    // A read transaction held open pins the WAL: no checkpoint can copy frames past its
    // snapshot, so the log never restarts and every commit of these runs stays in it.
    observer.exec("BEGIN");
    observer.prepare("SELECT COUNT(*) FROM threads").get();
    const counted = await countStatements(async () => {
      let steps = 0;
      for (let i = 0; i < runs; i++) steps += (await runOnce(app, workload, `account-${i}`)).steps;
      return steps;
    });
    observer.exec("COMMIT");
    const wal = readWalCommits(`${path}-wal`);
    checkpointWal(observer);
    const steps = counted.result;
    if (counted.statements === 0 || wal.commits === 0) {
      throw new Error(
        "accountStore: no statement or commit was seen; the counters are not attached",
      );
    }
    return {
      runs,
      steps,
      statementsPerStep: counted.statements / steps,
      commitsPerStep: wal.commits / steps,
      pagesPerCommit: wal.frames / wal.commits,
      walBytesPerStep: (wal.frames * (wal.pageSize + WAL_FRAME_HEADER_BYTES)) / steps,
      bytesPerStep: (statSync(path).size - sizeBefore) / steps,
      bytesPerStepByTable: perStep(difference(tableBytes(observer), tablesBefore), steps),
      statementsPerStepBySql: perStep(counted.bySql, steps),
    };
  } finally {
    observer.close();
    await checkpointer.close();
  }
}

/** Copies the WAL into the database file and empties it; fails if a reader kept it from that. */
function checkpointWal(db: Database.Database): void {
  const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
  if (result?.busy) throw new Error("accountStore: the WAL could not be checkpointed");
}

/** Bytes of pages held by each table and index, from SQLite's dbstat virtual table. */
function tableBytes(db: Database.Database): Record<string, number> {
  const rows = db.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name").all();
  return Object.fromEntries(
    (rows as { name: string; bytes: number }[]).map((r) => [r.name, r.bytes]),
  );
}

function difference(after: Record<string, number>, before: Record<string, number>) {
  return Object.fromEntries(
    Object.entries(after)
      .map(([name, bytes]) => [name, bytes - (before[name] ?? 0)] as const)
      .filter(([, grown]) => grown !== 0),
  );
}

function perStep(counts: Record<string, number>, steps: number): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([key, n]) => [key, n / steps]));
}
