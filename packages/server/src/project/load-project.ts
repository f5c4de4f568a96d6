import { CompiledGraph, InMemoryCheckpointer, StateGraph, type BaseState } from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import type { Store } from "@tenxgraph/core/store";
import { join } from "node:path";
import type { AppOptions } from "../app/app.js";
import {
  configDir,
  findConfigFile,
  loadEnvFile,
  readConfigFile,
  type ConfigFile,
} from "./config.js";
import { fromLangGraphAuth, isLangGraphAuth } from "./langgraph-auth.js";
import { loadExport } from "./load-module.js";
import type { Authenticate, AuthOption } from "../http/middleware/auth.js";
import type { ThreadNameGenerator } from "../threads/threads-context.js";
import type { MemoryStore } from "../storage/memory-store.js";
import { RunEventFollower } from "../background/run-event-follower.js";
import { PgRunStore } from "../background/run-store.js";
import type { LgGraphs } from "../langgraph/lg-context.js";
import type { RunWorkerOptions } from "../background/run-worker.js";
import { webhookUrlProblem, type WebhookSettings } from "../webhooks/webhook-settings.js";

/** A project loaded from its config file, ready for `createApp`/`serve`. */
export interface LoadedProject {
  configPath: string;
  options: AppOptions;
  /**
   * Background runs' settings for a `RunWorker` (graph and store included), when the config
   * turns runs on.
   */
  worker: RunWorkerOptions | null;
  /** Webhook settings, when the config (or `TENXGRAPH_WEBHOOK_SECRET`) turns webhooks on. */
  webhooks: WebhookSettings | null;
  /** Closes the checkpointer (and the runs' connections), so the process can exit. */
  close(): Promise<void>;
}

/**
 * Reads the config file (`tenxgraph.json`, else `10xgraph.json` / `agentflow.json`), loads its
 * `.env`, the graph and the optional checkpointer, store, auth and thread-name generator.
 */
export async function loadProject(dir: string, configFile?: string): Promise<LoadedProject> {
  const configPath = findConfigFile(dir, configFile);
  const config = readConfigFile(configPath);
  const base = configDir(configPath);
  if (config.env) loadEnvFile(join(base, config.env));
  for (const [key, value] of Object.entries(config.env_vars ?? {})) process.env[key] ??= value;
  const checkpointer = config.checkpointer
    ? ((await loadExport(config.checkpointer, base, "checkpointer")) as Checkpointer)
    : undefined;
  const exported = config.store ? await loadExport(config.store, base, "store") : undefined;
  // `store` names the long-term store (what nodes use), or, as before it, a MemoryStore.
  const store = isStore(exported) ? exported : undefined;
  const graphs = await loadGraphs(config, base, { checkpointer, store });
  const graph = graphs.default;
  const options: AppOptions = { graph, graphs };
  if (store) options.store = store;
  else if (exported) options.memory = exported as MemoryStore;
  if (config.thread_name_generator) {
    options.threadNameGenerator = asFunction(
      await loadExport(config.thread_name_generator, base, "thread_name_generator"),
      "thread_name_generator",
    ) as ThreadNameGenerator;
  }
  options.auth = await loadAuth(config.auth, base);
  if (config.inspector === false) options.inspector = false;
  if (config.trace_url !== undefined) options.traceUrl = config.trace_url;
  if (config.websocket?.max_connections) options.maxSockets = config.websocket.max_connections;
  const runs = runsOf(config, configPath);
  const worker = runs
    ? { graph, graphId: graphs.defaultId, graphs: graphs.byId, store: runs.store, ...runs.settings }
    : null;
  const webhooks = webhooksOf(config, configPath);
  if (runs) options.runs = { store: runs.store, follower: runs.follower, webhooks };
  return {
    configPath,
    options,
    worker,
    webhooks,
    async close() {
      await runs?.follower.close();
      await runs?.store.close();
      await graph.checkpointer.close();
      await (store as { close?: () => Promise<void> } | undefined)?.close?.();
    },
  };
}

/**
 * The runs' store and settings from `runs` in the config, or from `TENXGRAPH_RUNS_DSN` alone;
 * `null` when neither is there.
 */
function runsOf(config: ConfigFile, configPath: string) {
  const runs = config.runs;
  const dsn = runs?.postgres_dsn ?? process.env.TENXGRAPH_RUNS_DSN;
  if (!runs && !dsn) return null;
  if (!dsn) {
    throw new Error(
      `${configPath}: runs: no PostgreSQL for the queue: set runs.postgres_dsn or TENXGRAPH_RUNS_DSN`,
    );
  }
  const settings: Partial<RunWorkerOptions> = {};
  if (runs?.heartbeat_ms) settings.heartbeatMs = runs.heartbeat_ms;
  if (runs?.stale_after_ms) settings.staleAfterMs = runs.stale_after_ms;
  if (runs?.poll_interval_ms) settings.pollIntervalMs = runs.poll_interval_ms;
  if (runs?.concurrency) settings.concurrency = runs.concurrency;
  return {
    store: new PgRunStore({ postgresDsn: dsn }),
    follower: new RunEventFollower(dsn),
    settings,
  };
}

/** Webhook settings from `webhooks` and `TENXGRAPH_WEBHOOK_SECRET`; `null` when neither is set. */
function webhooksOf(config: ConfigFile, configPath: string): WebhookSettings | null {
  const hooks = config.webhooks;
  const secret = hooks?.secret ?? process.env.TENXGRAPH_WEBHOOK_SECRET;
  if (!hooks && !secret) return null;
  if (!secret) {
    throw new Error(
      `${configPath}: webhooks: no signing secret: set webhooks.secret or TENXGRAPH_WEBHOOK_SECRET`,
    );
  }
  const settings: WebhookSettings = {
    secret,
    url: hooks?.url ?? null,
    allowHosts: hooks?.allow_hosts ?? null,
    ...(hooks?.max_attempts ? { maxAttempts: hooks.max_attempts } : {}),
    ...(hooks?.retry_base_ms ? { retryBaseMs: hooks.retry_base_ms } : {}),
    ...(hooks?.retry_max_ms ? { retryMaxMs: hooks.retry_max_ms } : {}),
    ...(hooks?.timeout_ms ? { timeoutMs: hooks.timeout_ms } : {}),
  };
  const problem = settings.url ? webhookUrlProblem(settings.url, settings) : null;
  if (problem) throw new Error(`${configPath}: webhooks.url: ${problem}`);
  return settings;
}

/**
 * Every graph the config names (`graphs`, else `agent` alone as `agent`), the first the default.
 * They share one checkpointer (threads, ownership and the ledger are one): the configured one,
 * else one in memory for all.
 */
async function loadGraphs(
  config: ConfigFile,
  base: string,
  { checkpointer: configured, store }: GraphServices,
): Promise<LgGraphs> {
  const references = config.graphs ?? { agent: config.agent };
  const several = Object.keys(references).length > 1;
  const checkpointer = configured ?? (several ? new InMemoryCheckpointer() : undefined);
  const byId = new Map<string, CompiledGraph<BaseState>>();
  for (const [id, reference] of Object.entries(references)) {
    const graph = await loadGraph(
      await loadExport(reference, base, `graphs.${id}`),
      { checkpointer, store },
      reference,
    );
    const first = byId.values().next().value;
    if (first && graph.checkpointer !== first.checkpointer) {
      throw new Error(
        `graph '${id}' ('${reference}') is compiled with its own checkpointer: the graphs of one server share one; export the StateGraph instead`,
      );
    }
    byId.set(id, graph);
  }
  const [defaultId, defaultGraph] = [...byId][0]!;
  return { default: defaultGraph, defaultId, byId };
}

/** The configured checkpointer and long-term store, which every graph of the project uses. */
interface GraphServices {
  checkpointer: Checkpointer | undefined;
  store: Store | undefined;
}

/**
 * The graph from the `agent` export: a compiled graph as is, a StateGraph compiled with the
 * configured checkpointer and store, or a function called with `{ checkpointer, store }` that
 * returns either.
 */
async function loadGraph(
  value: unknown,
  { checkpointer, store }: GraphServices,
  reference: string,
): Promise<CompiledGraph<BaseState>> {
  const made =
    typeof value === "function" && !(value instanceof StateGraph)
      ? await (value as (o: object) => unknown)({ checkpointer, store })
      : value;
  if (made instanceof StateGraph) {
    const options = { ...(checkpointer ? { checkpointer } : {}), ...(store ? { store } : {}) };
    return made.compile(options) as CompiledGraph<BaseState>;
  }
  if (made instanceof CompiledGraph || isCompiledGraph(made)) {
    if (store && made.store !== store) {
      throw new Error(
        `agent '${reference}' is already compiled without the store tenxgraph.json names: ` +
          "export the StateGraph (or a function taking { checkpointer, store }) instead",
      );
    }
    if (checkpointer && made.checkpointer !== checkpointer) {
      throw new Error(
        `agent '${reference}' is already compiled with its own checkpointer, and tenxgraph.json names ` +
          "another: export the StateGraph (or a function taking { checkpointer }) instead",
      );
    }
    return made as CompiledGraph<BaseState>;
  }
  throw new Error(
    `agent '${reference}' is not a compiled graph, a StateGraph, or a function returning one`,
  );
}

/** A long-term store (`@tenxgraph/core/store`), by its shape: a MemoryStore has no namespaces. */
function isStore(value: unknown): value is Store {
  const v = value as Partial<Record<keyof Store, unknown>> | null | undefined;
  return typeof v?.listNamespaces === "function" && typeof v.search === "function";
}

/** Another copy of `@tenxgraph/core` makes `instanceof` fail: check the shape instead. */
function isCompiledGraph(value: unknown): value is CompiledGraph<BaseState> {
  const v = value as { invoke?: unknown; stream?: unknown; definition?: unknown } | null;
  return (
    typeof v?.invoke === "function" && typeof v.stream === "function" && v.definition !== undefined
  );
}

async function loadAuth(auth: unknown, base: string): Promise<AuthOption> {
  if (auth === undefined || auth === null) return null;
  if (auth === "jwt") return "jwt";
  const config = auth as { method: string; path?: string };
  if (config.method === "custom") {
    const exported = await loadExport(config.path!, base, "auth");
    // A langgraph.json's auth.path names LangGraph's `Auth` object; ours names a function.
    const fn = isLangGraphAuth(exported)
      ? fromLangGraphAuth(exported, "auth.path")
      : (asFunction(exported, "auth.path") as Authenticate);
    return { method: "custom", authenticate: fn };
  }
  return auth as AuthOption;
}

function asFunction(value: unknown, key: string): (...args: never[]) => unknown {
  if (typeof value !== "function") throw new Error(`${key} must name a function export`);
  return value as (...args: never[]) => unknown;
}
