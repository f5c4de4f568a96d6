import type { PgCheckpointer } from "@tenxgraph/postgres";
import type { BenchServers } from "../servers/bench-servers.js";
import { median } from "./median.js";
import { accountPgStore, type PgAccount } from "../accounting/pg-account.js";
import type { PgObserver } from "../accounting/pg-observer.js";
import { PgRawCommit } from "../floor/pg-raw-commit.js";
import {
  openPgStore,
  pgLabel,
  type PgStore,
  type PgWorkload,
  type WarningLog,
} from "../tenxgraph/pg-stores.js";
import { buildApp, runOnce } from "../tenxgraph/react-loop.js";
import { timeCheckpointer, type StoreTimes } from "../tenxgraph/time-checkpointer.js";

/** One workload on PgCheckpointer: timings beside the raw commit floor, and the counts. */
export interface PgRow {
  store: PgStore;
  turns: number;
  toolsPerTurn: number;
  steps: number;
  /** Timed runs. */
  runs: number;
  /** Median over runs of the whole run's ms divided by its node steps (one durable write each). */
  msPerStep: number;
  /** Median over the same runs of one raw autocommit INSERT, made right after each run. */
  rawCommitMs: number;
  /** Median over runs of the run's ms per step / the raw commit after it: the goal is at most 2. */
  ratio: number;
  /** Median over runs of the ms from a putCheckpoint call until its promise settled. */
  msPerWrite: number;
  /** The same for the ledger (read, claim, completion, heartbeat), per tool call. */
  ledgerMsPerToolCall: number;
  account: PgAccount;
}

/** Where a bench's schemas, servers and counters are. */
export interface PgBenchContext {
  servers: BenchServers;
  observer: PgObserver;
  /** Prefix of the schemas made for this bench run: `<prefix>_<label>_timed` and so on. */
  schemaPrefix: string;
  /** Steps of the untimed pass that counts round trips, commits and bytes, at least. */
  accountSteps: number;
  warnings: WarningLog;
}

const LEDGER_METHODS = ["getCalls", "claimCalls", "completeCall", "heartbeatCalls"];

/**
 * One workload on PgCheckpointer, timed a few runs at a time so that the bench can take turns
 * between workloads. Each timed run is followed by as many raw commits (same server, a scratch
 * table of their own) as it took steps, so machine noise falls on the runtime and the floor
 * alike. The counts come from an untimed pass on a schema of their own.
 */
export class PgWorkloadBench {
  readonly #workload: PgWorkload;
  readonly #account: PgAccount;
  readonly #checkpointer: PgCheckpointer;
  readonly #times: StoreTimes;
  readonly #app: ReturnType<typeof buildApp>;
  readonly #floor: PgRawCommit;
  readonly #perStep: number[] = [];
  readonly #rawPerCommit: number[] = [];
  readonly #ratios: number[] = [];
  readonly #storeTimes: ReturnType<typeof storeTimes>[] = [];
  #runs = 0;

  private constructor(
    workload: PgWorkload,
    account: PgAccount,
    checkpointer: PgCheckpointer,
    floor: PgRawCommit,
  ) {
    this.#workload = workload;
    this.#account = account;
    this.#checkpointer = checkpointer;
    const { store, times } = timeCheckpointer(checkpointer, "settled");
    this.#times = times;
    this.#app = buildApp(workload, store);
    this.#floor = floor;
  }

  /** Counts the workload (see `accountPgStore`), then opens the store and floor to time. */
  static async open(workload: PgWorkload, context: PgBenchContext): Promise<PgWorkloadBench> {
    const { servers, observer, schemaPrefix, accountSteps, warnings } = context;
    const schema = (use: string) => `${schemaPrefix}_${pgLabel(workload)}_${use}`;
    const account = await accountPgStore(workload, {
      servers,
      observer,
      schema: schema("account"),
      minSteps: accountSteps,
      warnings,
    });
    // The raw row is as large as what a step adds to the tables, so both write about as much.
    const floor = await PgRawCommit.open(servers.postgresDsn, {
      schema: schema("raw"),
      rowBytes: account.bytesPerStep,
    });
    const checkpointer = openPgStore(servers, workload.store, schema("timed"), warnings);
    await checkpointer.setup();
    return new PgWorkloadBench(workload, account, checkpointer, floor);
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
      const raw = await this.#floor.sequential(run.steps);
      if (!measured) continue;
      const msPerStep = run.ms / run.steps;
      this.#perStep.push(msPerStep);
      this.#rawPerCommit.push(raw);
      // Paired, so a slow spell of the server or disk lands on both sides of the same ratio.
      this.#ratios.push(msPerStep / raw);
      this.#storeTimes.push(storeTimes(this.#times, this.#workload));
    }
  }

  /** The figures of the measured rounds. */
  result(): PgRow {
    const { store, turns, toolsPerTurn } = this.#workload;
    return {
      store,
      turns,
      toolsPerTurn,
      steps: this.stepsPerRun,
      runs: this.#perStep.length,
      msPerStep: median(this.#perStep),
      rawCommitMs: median(this.#rawPerCommit),
      ratio: median(this.#ratios),
      msPerWrite: median(this.#storeTimes.map((t) => t.msPerWrite)),
      ledgerMsPerToolCall: median(this.#storeTimes.map((t) => t.ledgerMsPerToolCall)),
      account: this.#account,
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.#floor.close(), this.#checkpointer.close()]);
  }
}

/** One run's store times, per write and per tool call. */
function storeTimes(times: StoreTimes, workload: PgWorkload) {
  const toolCalls = workload.turns * workload.toolsPerTurn;
  const ms = (names: string[]) => names.reduce((sum, n) => sum + (times.get(n)?.ms ?? 0), 0);
  const write = times.get("putCheckpoint");
  return {
    msPerWrite: write ? write.ms / write.calls : 0,
    ledgerMsPerToolCall: ms(LEDGER_METHODS) / toolCalls,
  };
}
