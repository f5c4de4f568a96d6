import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import {
  fromLangGraphConfig,
  isLangGraphConfig,
  langgraphConfigSchema,
} from "./langgraph-config.js";

/** File names a project's config may have, in the order they are looked for. */
export const CONFIG_FILE_NAMES = [
  "tenxgraph.json",
  "10xgraph.json",
  "agentflow.json",
  "langgraph.json",
];

const reference = z.string().min(1).regex(/.+/, 'expected "module:export"');

/** `tenxgraph.json`: which graph to serve and how (10xGraph's keys). */
export const configFileSchema = z.looseObject({
  /** `"./graph.ts:app"`: a compiled graph, a StateGraph, or a function returning either. */
  agent: reference,
  checkpointer: reference.nullable().optional(),
  store: reference.nullable().optional(),
  auth: z
    .union([
      z.null(),
      z.literal("jwt"),
      z.object({
        method: z.literal("jwt"),
        jwks_url: z.string().url().optional(),
        issuer: z.string().optional(),
        audience: z.string().optional(),
        user_claim: z.string().optional(),
      }),
      z.object({ method: z.literal("custom"), path: reference }),
    ])
    .optional(),
  env: z.string().nullable().optional(),
  /** Variables to set (a `langgraph.json`'s `env` object); those already set win. */
  env_vars: z.record(z.string(), z.string()).optional(),
  /** Every graph served, by graph id (a `langgraph.json`'s `graphs`); `agent` is the default. */
  graphs: z.record(z.string(), reference).optional(),
  /** `max_connections`: most WebSockets open at once on this process (null or 0: no limit). */
  websocket: z
    .object({ max_connections: z.number().int().min(0).nullable().optional() })
    .nullable()
    .optional(),
  thread_name_generator: reference.nullable().optional(),
  /** `false` turns the web inspector at `/inspector` off (as `--no-inspector` does). */
  inspector: z.boolean().optional(),
  /** Where the inspector links a run's trace, `{traceId}` replaced (as `--trace-url` does). */
  trace_url: z.string().optional(),
  /**
   * Background runs on PostgreSQL (`/v1/threads/{id}/runs`, `tenxgraph worker`). The DSN may be
   * left to the `TENXGRAPH_RUNS_DSN` environment variable, which also turns runs on alone.
   */
  runs: z
    .object({
      postgres_dsn: z.string().min(1).optional(),
      heartbeat_ms: z.number().int().positive().optional(),
      stale_after_ms: z.number().int().positive().optional(),
      poll_interval_ms: z.number().int().positive().optional(),
      concurrency: z.number().int().positive().optional(),
    })
    .nullable()
    .optional(),
  /**
   * Webhooks of background runs (docs/timers-schedules-webhooks.md). The secret may be left to
   * the `TENXGRAPH_WEBHOOK_SECRET` environment variable.
   */
  webhooks: z
    .object({
      secret: z.string().min(16, "webhooks.secret must be at least 16 characters").optional(),
      url: z.string().min(1).optional(),
      allow_hosts: z.array(z.string().min(1)).optional(),
      max_attempts: z.number().int().positive().optional(),
      retry_base_ms: z.number().int().positive().optional(),
      retry_max_ms: z.number().int().positive().optional(),
      timeout_ms: z.number().int().positive().optional(),
    })
    .nullable()
    .optional(),
});
/** A parsed config file. */
export type ConfigFile = z.infer<typeof configFileSchema>;

/**
 * The config file to use: `given` when set (it must exist), else the first of
 * {@link CONFIG_FILE_NAMES} in `dir`.
 */
export function findConfigFile(dir: string, given?: string): string {
  if (given) {
    const path = resolve(dir, given);
    if (!existsSync(path)) throw new Error(`Config file not found: ${path}`);
    return path;
  }
  for (const name of CONFIG_FILE_NAMES) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  throw new Error(`No ${CONFIG_FILE_NAMES.join(" / ")} in ${dir} (or pass --config <file>)`);
}

/** Reads and checks a config file; errors name the file and the bad key. */
export function readConfigFile(path: string): ConfigFile {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`${path}: not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (isLangGraphConfig(json))
    json = fromLangGraphConfig(parseOrThrow(path, langgraphConfigSchema, json));
  return parseOrThrow(path, configFileSchema, json);
}

function parseOrThrow<T extends z.ZodType>(path: string, schema: T, json: unknown): z.infer<T> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${path}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * Loads a `.env` file into `process.env` (variables already set win). `KEY=value` lines,
 * `#` comments, optional quotes.
 */
export function loadEnvFile(path: string): void {
  if (!existsSync(path)) throw new Error(`env file not found: ${path}`);
  for (const line of readFileSync(path, "utf8").split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    const [, key, raw] = match as unknown as [string, string, string];
    const value = /^(["']).*\1$/.test(raw) ? raw.slice(1, -1) : raw.replace(/\s+#.*$/, "");
    process.env[key] ??= value;
  }
}

/** The folder a config file's relative references are resolved from. */
export function configDir(path: string): string {
  return dirname(path);
}
