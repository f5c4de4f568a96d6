import { tool, type AnyTool, type InDoubtPolicy } from "@tenxgraph/core";
import { z } from "zod";
import type { McpClient, McpToolInfo } from "./mcp-client.js";
import { toToolOutput } from "./mcp-result.js";

/** Options of {@link mcpTools}. */
export interface McpToolsOptions {
  /** Put before every tool name (`"github_"`), so two servers' tools cannot clash. */
  prefix?: string;
  /** Keeps the tools for which it returns true (default: all). */
  filter?: (info: McpToolInfo) => boolean;
  /** Seconds one call may run; overrides the run's `toolTimeout` (see `tool({ timeout })`). */
  timeout?: number | null;
  /**
   * What happens to a call found started but never recorded (see `tool({ onInDoubt })`); a
   * function chooses per tool, e.g. from its annotations (default `"retry"`):
   * `(info) => (info.annotations?.idempotentHint ? "retry" : "fail")`.
   */
  onInDoubt?: McpInDoubtPolicy | ((info: McpToolInfo) => McpInDoubtPolicy);
  /** Aborts the listing. */
  signal?: AbortSignal;
}

/** The in-doubt policies that need no code of the tool's own. */
export type McpInDoubtPolicy = Extract<InDoubtPolicy<unknown>, string>;

/**
 * The key under which a call's idempotency key is sent in the MCP request's `_meta`, so a
 * server that honours it can make a replayed call harmless on its side.
 */
export const MCP_IDEMPOTENCY_KEY_META = "tenxgraph/idempotencyKey";

// The SDK's default request timeout (60 s) would fail a call before the deadline the run set;
// the call is bounded by ctx.signal instead (tool timeout, node timeout, stop).
const NO_CLIENT_TIMEOUT_MS = 2 ** 31 - 1;

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The tools of a connected MCP client as tenxgraph tools. They run in a `ToolNode` like local
 * tools: through the tool ledger (a recorded call is replayed, never sent again), under the
 * tool and node deadlines, and a deadline or stop cancels the MCP request. The model sees each
 * server's own JSON Schema; arguments are also checked here when zod can read that schema,
 * except `pattern` and `format`, which only the server checks.
 *
 * @example
 * const client = new Client({ name: "support-agent", version: "1.0.0" });
 * await client.connect(new StdioClientTransport({ command: "npx", args: ["my-mcp-server"] }));
 * const tools = [...(await mcpTools(client, { prefix: "crm_" })), chargeCard];
 * const app = createReactAgent({ model: "openai/gpt-4o-mini", tools });
 */
export async function mcpTools(
  client: McpClient,
  options: McpToolsOptions = {},
): Promise<AnyTool[]> {
  const infos = (await listAll(client, options.signal)).filter(options.filter ?? (() => true));
  const tools: AnyTool[] = [];
  const names = new Map<string, string>();
  for (const info of infos) {
    const name = toolName(info.name, options.prefix ?? "");
    const other = names.get(name);
    if (other !== undefined) {
      throw new TypeError(
        `mcpTools: MCP tools '${other}' and '${info.name}' both become '${name}'; ` +
          `use filter to keep one of them`,
      );
    }
    names.set(name, info.name);
    tools.push(mcpTool(client, info, name, options));
  }
  return tools;
}

async function listAll(client: McpClient, signal: AbortSignal | undefined): Promise<McpToolInfo[]> {
  const all: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { signal });
    all.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

function mcpTool(
  client: McpClient,
  info: McpToolInfo,
  name: string,
  options: McpToolsOptions,
): AnyTool {
  const policy =
    typeof options.onInDoubt === "function" ? options.onInDoubt(info) : options.onInDoubt;
  const defined = tool({
    name,
    description: info.description?.trim() || info.title || info.annotations?.title || info.name,
    schema: argumentsSchema(info),
    timeout: options.timeout,
    onInDoubt: policy ?? "retry",
    async execute(args, ctx) {
      const result = await client.callTool(
        {
          name: info.name,
          arguments: args,
          _meta: { [MCP_IDEMPOTENCY_KEY_META]: ctx.idempotencyKey },
        },
        undefined,
        { signal: ctx.signal, timeout: NO_CLIENT_TIMEOUT_MS },
      );
      return toToolOutput(info.name, result);
    },
  });
  // The model gets the server's schema as the server wrote it, not a round trip through zod.
  return { ...defined, jsonSchema: () => info.inputSchema };
}

/**
 * A zod schema for the arguments, from the server's JSON Schema. Where zod cannot read that
 * schema (`$ref` to `definitions`, `if`/`then`), the arguments are only checked to be an object
 * and the server, which validates its own arguments, reports the rest.
 */
function argumentsSchema(info: McpToolInfo): z.ZodType<Record<string, unknown>> {
  try {
    const schema = withoutStringChecks(info.inputSchema) as z.core.JSONSchema.JSONSchema;
    return z.fromJSONSchema(schema) as z.ZodType<Record<string, unknown>>;
  } catch {
    return z.record(z.string(), z.unknown());
  }
}

// The keywords whose value is a map of subschemas, and those whose value is a subschema or a
// list of them. Any other keyword's value is data (`enum`, `default`, ...) and is kept as is.
const SCHEMA_MAPS = new Set(
  "properties patternProperties dependentSchemas $defs definitions".split(" "),
);
const SUBSCHEMAS = new Set(
  (
    "items prefixItems additionalItems unevaluatedItems contains additionalProperties " +
    "unevaluatedProperties propertyNames not if then else allOf anyOf oneOf"
  ).split(" "),
);

/**
 * The server's schema without `pattern` and `format`, for the local check only. The server is
 * the judge of its arguments; the local check is there to tell the model at once about a
 * missing field or a wrong type. Patterns and formats are where validators disagree: zod
 * compiles a pattern without the `u` flag (so `^\p{L}+$` refuses "José"), and its `email` or
 * `uri` are not the server's. A refusal here would block a call the server accepts.
 */
function withoutStringChecks(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutStringChecks);
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "pattern" || key === "format") continue;
    if (SCHEMA_MAPS.has(key) && typeof value === "object" && value !== null) {
      const entries = Object.entries(value).map(([k, v]) => [k, withoutStringChecks(v)]);
      out[key] = Object.fromEntries(entries);
    } else {
      out[key] = SUBSCHEMAS.has(key) ? withoutStringChecks(value) : value;
    }
  }
  return out;
}

/** A tenxgraph tool name for an MCP tool: other characters become `_`. */
function toolName(mcpName: string, prefix: string): string {
  const name = `${prefix}${mcpName}`.replace(/[^A-Za-z0-9_-]/g, "_");
  if (!TOOL_NAME.test(name)) {
    throw new TypeError(
      `mcpTools: MCP tool '${mcpName}' gives the name '${name}', which is not 1-64 letters, ` +
        `digits, '_' or '-' (a shorter prefix, or filter it out)`,
    );
  }
  return name;
}
