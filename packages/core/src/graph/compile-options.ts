import type { Meter } from "@opentelemetry/api";
import type { Logger } from "../events/logger.js";
import type { TracingOptions } from "../events/tracing.js";
import type { IdGenerator } from "../messages/ids.js";
import type { FaultInjector } from "../node/fault-points.js";
import { GraphValidationError } from "../errors/errors.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import type { Store } from "../store/store.js";
import type { GraphMigration } from "../definition/graph-migrations.js";
import type { BreakpointOptions } from "../runtime/breakpoints.js";
import {
  LANGGRAPH_OPTION_HINTS,
  requireKnownOptions,
  type OptionHints,
} from "../errors/unknown-option.js";

/**
 * Options of `StateGraph.compile()`. `interruptBefore` / `interruptAfter` are static breakpoints
 * for every run of the graph (a run's config may set its own); see docs/interrupts-deadlines-stop.md.
 */
export interface CompileOptions extends BreakpointOptions {
  /** Where threads, messages and the tool ledger live (default: a new `InMemoryCheckpointer`). */
  checkpointer?: Checkpointer;
  /**
   * Long-term memory across threads, for nodes and tools as `ctx.store` (`InMemoryStore` from
   * `@tenxgraph/core/store`, `SqliteStore`, `PgStore`). Without it, `ctx.store` fails with
   * `STORE_001`.
   */
  store?: Store;
  /** A pino-compatible logger (default: JSON lines on stderr from `warn` up). */
  logger?: Logger;
  /** OpenTelemetry meter (default: the global meter named `10xgraph`). */
  meter?: Meter;
  /**
   * Spans of runs, steps and tool calls: the tracer (default: the global tracer named
   * `10xgraph`), the graph's name in its run spans, and whether tool arguments and results are
   * recorded (off by default). See docs/events-logs-metrics.md#traces.
   */
  tracing?: TracingOptions;
  /**
   * Id generator (default: UUIDv7) for run ids, generated thread ids, and the ids model nodes give
   * their replies (`ctx.newId()`). `Message.*` factories always use UUIDv7.
   */
  ids?: IdGenerator;
  /** Named fault points for crash and fault tests (see `FaultPoints` in `@tenxgraph/core/testing`). */
  faultPoints?: FaultInjector;
  /** How often a running run polls the store for stop requests and heartbeats its claims (default 1000 ms). */
  stopPollIntervalMs?: number;
  /**
   * The lease of this runtime's ledger claims (default 3000 ms): each claim it makes, and each
   * heartbeat, keeps the claim live this long on the store's clock. Every reader honours the
   * lease the claimant stated, whatever its own setting: a claim whose lease expired counts as
   * left by a dead execution (in doubt); a live one is waited on instead of running twice.
   */
  claimStaleAfterMs?: number;
  /**
   * This graph's version as its author names it, recorded with every checkpoint beside the
   * fingerprint of its shape. Change it when a node's code changes what the state means; a
   * migration names it as its `from`. See docs/deploys.md.
   */
  version?: string;
  /** How threads written by earlier versions carry over: renamed nodes and tools, new state. */
  migrations?: readonly GraphMigration[];
}

/** Every key of {@link CompileOptions}: the compiler checks the list against the interface. */
const COMPILE_OPTION_KEYS = {
  checkpointer: true,
  store: true,
  logger: true,
  meter: true,
  tracing: true,
  ids: true,
  faultPoints: true,
  stopPollIntervalMs: true,
  claimStaleAfterMs: true,
  version: true,
  migrations: true,
  interruptBefore: true,
  interruptAfter: true,
} satisfies Record<keyof CompileOptions, true>;
const COMPILE_OPTIONS: ReadonlySet<string> = new Set(Object.keys(COMPILE_OPTION_KEYS));

/** What to use instead of LangGraph.js's compile options. */
const COMPILE_HINTS: OptionHints = {
  ...LANGGRAPH_OPTION_HINTS,
  name: "A graph has no name: a subgraph node is named by addNode(name, graph)",
  description: "A graph has no description",
};

/**
 * Refuses an option `compile()` does not know (`OPTION_001`), a LangGraph.js one
 * (`checkpointSaver`, `debug`) included: JavaScript would ignore it silently.
 */
export function requireCompileOptions(options: CompileOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("compile(): options must be an object, e.g. { checkpointer }");
  }
  requireKnownOptions("compile()", options, COMPILE_OPTIONS, COMPILE_HINTS);
  const { store } = options;
  const methods = ["get", "put", "delete", "search", "listNamespaces"] as const;
  if (
    store !== undefined &&
    (typeof store !== "object" ||
      store === null ||
      methods.some((m) => typeof store[m] !== "function"))
  ) {
    throw new TypeError(
      "compile(): store must be a Store (get, put, delete, search, listNamespaces), e.g. " +
        "new InMemoryStore() from @tenxgraph/core/store",
    );
  }
}

/**
 * A live run heartbeats its claims once per poll interval, each beat renewing their lease of
 * `claimStaleAfterMs`. Unless the lease allows for at least two missed beats, a slow but live
 * execution would look dead and its call could run twice.
 */
export function checkTimings(stopPollIntervalMs: number, claimStaleAfterMs: number): void {
  for (const [name, value] of Object.entries({ stopPollIntervalMs, claimStaleAfterMs })) {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new RangeError(
        `compile(): ${name} must be a positive number of milliseconds, got ${value}`,
      );
    }
  }
  if (claimStaleAfterMs < 2 * stopPollIntervalMs) {
    throw new RangeError(
      `compile(): claimStaleAfterMs (${claimStaleAfterMs}) must be at least twice stopPollIntervalMs ` +
        `(${stopPollIntervalMs}), or a live execution's claims could be taken for abandoned ones`,
    );
  }
}

/** `compile({ version })`: a non-empty string, or absent (`GRAPH_008`). */
export function requireVersionName(version: unknown): string | undefined {
  if (version === undefined || (typeof version === "string" && version.trim() !== "")) {
    return version;
  }
  throw new GraphValidationError(
    "GRAPH_008",
    `compile(): version must be a non-empty string, got ${JSON.stringify(version) ?? String(version)}`,
  );
}
