import type { BenchServers } from "./servers/bench-servers.js";
import type { WarningLog } from "./tenxgraph/warning-log.js";

/** The runtimes measured side by side. */
export type Runtime = "tenxgraph" | "langgraph";

/** Where a loop keeps its threads. */
export type StoreSpec =
  /** `sdk`: tenxgraph traced by an OpenTelemetry SDK tracer (see `sdk-tracer.ts`). */
  | { kind: "memory"; sdk?: boolean }
  /**
   * A SQLite file. `synchronous` is tenxgraph's setting; LangGraph's SqliteSaver is opened as a
   * user opens it (`fromConnString`), with the pragmas it picks itself.
   */
  | { kind: "sqlite"; path: string; synchronous: "FULL" | "NORMAL" }
  /** A schema of its own on the bench's server; `withRedis` only exists for tenxgraph. */
  | {
      kind: "postgres";
      servers: BenchServers;
      schema: string;
      withRedis: boolean;
      warnings: WarningLog;
    };

/** The time a run spent inside tenxgraph's store methods (LangGraph's savers are not timed). */
export interface StoreTimesPerRun {
  /** ms inside putCheckpoint per call (the input, then one per step). */
  msPerWrite: number;
  /** ms inside the ledger (read, claim, completion, heartbeat) per tool call. */
  ledgerMsPerToolCall: number;
  /** ms inside any store method, per step. */
  storeMsPerStep: number;
}

/** One run of a loop: its node steps, its wall time and, where timed, its store's share. */
export interface LoopRun {
  steps: number;
  ms: number;
  store?: StoreTimesPerRun;
}

/** One runtime's ReAct loop compiled on one store, ready to run on fresh threads. */
export interface Loop {
  readonly runtime: Runtime;
  /** Runs the whole workload on thread `threadId`; throws if the run did not complete. */
  run(threadId: string): Promise<LoopRun>;
  /**
   * Settings of the store's own connection that another connection cannot read (SQLite's
   * `synchronous`), read after a run, since a store may apply them on first use.
   */
  connectionSettings?(): Record<string, string>;
  /**
   * The better-sqlite3 connection of a store that brings its own copy of the driver
   * (LangGraph's SqliteSaver), so the statement counter can wrap that copy too.
   */
  sqliteConnection?(): { prepare(sql: string): object };
  /** Closes the store (a pool, a file); a loop on memory has nothing to close. */
  close(): Promise<void>;
}
