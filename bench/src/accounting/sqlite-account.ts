import { statSync } from "node:fs";
import Database from "better-sqlite3";
import type { Loop } from "../loop.js";
import { countStatements } from "./count-statements.js";
import { readWalCommits } from "./read-wal-commits.js";

/** What a runtime's SQLite store did for a workload, per node step, counted on a fresh file. */
export interface SqliteAccount {
  /** The file's journal mode, as the store left it. */
  journalMode: string;
  /** The store connection's synchronous setting, as the loop reports it. */
  synchronous: string;
  /** Runs of the workload counted (short loops run several times, so the file grows enough). */
  runs: number;
  steps: number;
  statementsPerStep: number;
  /** Committed transactions in the WAL, per step (null if the file is not in WAL mode). */
  commitsPerStep: number | null;
  /** Pages (WAL frames) a commit writes, on average: what each commit has to fsync. */
  pagesPerCommit: number | null;
  /** WAL bytes written per step (frames with their headers). */
  walBytesPerStep: number | null;
  /** Growth of the database file per step, after a checkpoint that empties the WAL. */
  bytesPerStep: number;
  /** The same growth split by table and index (dbstat page bytes), per step. */
  bytesPerStepByTable: Record<string, number>;
  /** Executions per step of each statement, keyed by its first words. */
  statementsPerStepBySql: Record<string, number>;
}

const WAL_FRAME_HEADER_BYTES = 24;

/**
 * Runs `loop` (opened on the fresh SQLite file `path`) and counts, per step, the statements
 * executed, the transactions committed and the bytes the file grows by. Untimed: the counting
 * slows the store. One run goes first uncounted, so that a store that creates its tables on
 * first use (SqliteSaver) has done so; then `runs` runs are counted.
 */
export async function accountSqliteFile(
  loop: Loop,
  path: string,
  runs: number,
): Promise<SqliteAccount> {
  await loop.run("account-warm-up");
  const observer = new Database(path);
  try {
    const journalMode = String(observer.pragma("journal_mode", { simple: true }));
    const wal = journalMode === "wal";
    checkpointWal(observer);
    const sizeBefore = statSync(path).size;
    const tablesBefore = tableBytes(observer);
    // A read transaction held open pins the WAL: no checkpoint can copy frames past its
    // snapshot, so the log never restarts and every commit of these runs stays in it.
    observer.exec("BEGIN");
    observer.prepare("SELECT COUNT(*) FROM sqlite_master").get();
    const counted = await countStatements(
      async () => {
        let steps = 0;
        for (let i = 0; i < runs; i++) steps += (await loop.run(`account-${i}`)).steps;
        return steps;
      },
      loop.sqliteConnection ? [loop.sqliteConnection()] : [],
    );
    observer.exec("COMMIT");
    const frames = wal ? readWalCommits(`${path}-wal`) : null;
    checkpointWal(observer);
    const steps = counted.result;
    if (counted.statements === 0 || frames?.commits === 0) {
      throw new Error(
        "accountSqliteFile: no statement or commit was seen; the counters are not attached",
      );
    }
    return {
      journalMode,
      synchronous: loop.connectionSettings?.().synchronous ?? "?",
      runs,
      steps,
      statementsPerStep: counted.statements / steps,
      commitsPerStep: frames && frames.commits / steps,
      pagesPerCommit: frames && frames.frames / frames.commits,
      walBytesPerStep:
        frames && (frames.frames * (frames.pageSize + WAL_FRAME_HEADER_BYTES)) / steps,
      bytesPerStep: (statSync(path).size - sizeBefore) / steps,
      bytesPerStepByTable: perStep(difference(tableBytes(observer), tablesBefore), steps),
      statementsPerStepBySql: perStep(counted.bySql, steps),
    };
  } finally {
    observer.close();
  }
}

/** Copies the WAL into the database file and empties it; fails if a reader kept it from that. */
function checkpointWal(db: Database.Database): void {
  if (db.pragma("journal_mode", { simple: true }) !== "wal") return;
  const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
  if (result?.busy) throw new Error("accountSqliteFile: the WAL could not be checkpointed");
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
