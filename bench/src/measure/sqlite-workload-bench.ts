import { join } from "node:path";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { median } from "./median.js";
import { SqliteRawCommit } from "../floor/sqlite-raw-commit.js";
import { buildApp, runOnce, type Workload } from "../tenxgraph/react-loop.js";
import { accountStore, type StoreAccount } from "../accounting/sqlite-account.js";
import { timeCheckpointer, type StoreTimes } from "../tenxgraph/time-checkpointer.js";

/** One workload on SqliteCheckpointer: timings beside the raw commit floor, and the counts. */
export interface SqliteRow {
  store: "sqlite";
  synchronous: "FULL" | "NORMAL";
  turns: number;
  toolsPerTurn: number;
  steps: number;
  /** Timed runs. */
  runs: number;
  /** Median over runs of the whole run's ms divided by its node steps (one durable write each). */
  msPerStep: number;
  /** Median over the same runs of one raw synchronous=FULL commit, made right after each run. */
  rawFullCommitMs: number;
  /** Median over runs of the run's ms per step / the raw commit after it: the goal is at most 2. */
  ratio: number;
  /** Median over runs of the ms inside putCheckpoint per call (the input, then one per step). */
  msPerWrite: number;
  /** Median over runs of the ms inside the ledger (read, claim, completion, heartbeat) per call. */
  ledgerMsPerToolCall: number;
  /** Median over runs of the ms inside any store method, per step. */
  storeMsPerStep: number;
  account: StoreAccount;
}

type Synchronous = SqliteRow["synchronous"];

const LEDGER_METHODS = ["getCalls", "claimCalls", "completeCall", "heartbeatCalls"];

/**
 * One workload on a SqliteCheckpointer file in `dir`, timed a few runs at a time so that the
 * bench can take turns between workloads. Each timed run is followed by as many raw FULL commits
 * (on a file of their own) as it took steps, so machine noise falls on the runtime and the floor
 * alike. The counts (statements, commits, bytes) come from an untimed pass on a third file.
 */
export class SqliteWorkloadBench {
  readonly #workload: Workload;
  readonly #synchronous: Synchronous;
  readonly #account: StoreAccount;
  readonly #checkpointer: SqliteCheckpointer;
  readonly #times: StoreTimes;
  readonly #app: ReturnType<typeof buildApp>;
  readonly #floor: SqliteRawCommit;
  readonly #perStep: number[] = [];
  readonly #rawPerCommit: number[] = [];
  readonly #ratios: number[] = [];
  readonly #storeTimes: ReturnType<typeof storeTimes>[] = [];
  #runs = 0;

  private constructor(
    workload: Workload,
    synchronous: Synchronous,
    account: StoreAccount,
    dir: string,
  ) {
    const name = label(workload, synchronous);
    this.#workload = workload;
    this.#synchronous = synchronous;
    this.#account = account;
    this.#checkpointer = new SqliteCheckpointer({
      path: join(dir, `timed-${name}.db`),
      synchronous,
    });
    const { store, times } = timeCheckpointer(this.#checkpointer);
    this.#times = times;
    this.#app = buildApp(workload, store);
    // The raw row is as large as what a step adds to the file, so both write about as much.
    this.#floor = new SqliteRawCommit(join(dir, `raw-${name}.db`), "FULL", account.bytesPerStep);
  }

  /**
   * Counts the workload's statements, commits and bytes over at least `accountSteps` steps, then
   * opens the files to time it on, all in `dir`.
   */
  static async open(
    workload: Workload,
    synchronous: Synchronous,
    { dir, accountSteps }: { dir: string; accountSteps: number },
  ): Promise<SqliteWorkloadBench> {
    const path = join(dir, `account-${label(workload, synchronous)}.db`);
    const account = await accountStore(workload, synchronous, path, accountSteps);
    return new SqliteWorkloadBench(workload, synchronous, account, dir);
  }

  /** Steps in one run of the workload: a model step and a tools step per turn, and a last answer. */
  get stepsPerRun(): number {
    return this.#workload.turns * 2 + 1;
  }

  /** Runs the workload `runs` times; a warm-up round (`measured` false) records nothing. */
  async round(runs: number, measured: boolean): Promise<void> {
    for (let i = 0; i < runs; i++) {
      this.#times.clear();
      const run = await runOnce(this.#app, this.#workload, `timed-${this.#runs++}`);
      const raw = this.#floor.run(run.steps);
      if (!measured) continue;
      const msPerStep = run.ms / run.steps;
      this.#perStep.push(msPerStep);
      this.#rawPerCommit.push(raw);
      // Paired, so a slow spell of the disk lands on both sides of the same ratio.
      this.#ratios.push(msPerStep / raw);
      this.#storeTimes.push(storeTimes(this.#times, run.steps, this.#workload));
    }
  }

  /** The figures of the measured rounds. */
  result(): SqliteRow {
    const runs = this.#perStep.length;
    const { turns, toolsPerTurn } = this.#workload;
    return {
      store: "sqlite",
      synchronous: this.#synchronous,
      turns,
      toolsPerTurn,
      steps: this.stepsPerRun,
      runs,
      msPerStep: median(this.#perStep),
      rawFullCommitMs: median(this.#rawPerCommit),
      ratio: median(this.#ratios),
      msPerWrite: median(this.#storeTimes.map((t) => t.msPerWrite)),
      ledgerMsPerToolCall: median(this.#storeTimes.map((t) => t.ledgerMsPerToolCall)),
      storeMsPerStep: median(this.#storeTimes.map((t) => t.storeMsPerStep)),
      account: this.#account,
    };
  }

  async close(): Promise<void> {
    this.#floor.close();
    await this.#checkpointer.close();
  }
}

/** A workload's name in file names: `FULL-50x4`. */
function label(workload: Workload, synchronous: Synchronous): string {
  return `${synchronous}-${workload.turns}x${workload.toolsPerTurn}`;
}

/** One run's store times, per write, per tool call and per step. */
function storeTimes(times: StoreTimes, steps: number, workload: Workload) {
  const toolCalls = workload.turns * workload.toolsPerTurn;
  const ms = (names: string[]) => names.reduce((sum, n) => sum + (times.get(n)?.ms ?? 0), 0);
  const write = times.get("putCheckpoint");
  return {
    msPerWrite: write ? write.ms / write.calls : 0,
    ledgerMsPerToolCall: ms(LEDGER_METHODS) / toolCalls,
    storeMsPerStep: ms([...times.keys()]) / steps,
  };
}
