import { z } from "zod";
import { GraphValidationError } from "../errors/errors.js";
import { isGraphNode, type NodeLike } from "./graph-node.js";
import type { BaseState } from "./reducers.js";

/**
 * How a thread written by an earlier version of the graph carries over to this one
 * (`compile({ migrations })`). Each migration takes a thread from its `from` version straight
 * to this graph: with three versions, give one from each of the two before.
 *
 * @example
 * compile({
 *   version: "2",
 *   migrations: [{
 *     from: "1",
 *     nodes: { TOOLS: "TOOL" },
 *     tools: { charge_card: "charge_payment" },
 *     state: (values) => ({ ...values, currency: values.currency ?? "EUR" }),
 *   }],
 * });
 */
export interface GraphMigration {
  /** The version the thread was written by: its `compile({ version })`, or its fingerprint. */
  from: string;
  /** Former node names, each to the node of this graph that replaces it. */
  nodes?: Readonly<Record<string, string>>;
  /**
   * Former tool names, each to the tool of this graph that replaces it. A pending call of the
   * former name runs the new tool, and the new tool owns the former's ledger entries: a call
   * recorded under the former name replays and never runs again.
   */
  tools?: Readonly<Record<string, string>>;
  /** The thread's state fields (not `messages`) as this graph needs them. Plain JSON in and out. */
  state?: (values: Record<string, unknown>) => Record<string, unknown>;
}

/** The migrations of a compiled graph, checked and indexed. */
export interface ThreadMigrations {
  /** Each migration by its `from` version. */
  readonly byFrom: ReadonlyMap<string, GraphMigration>;
  /**
   * Every former tool name of every migration, to its tool in this graph: a tool owns the
   * ledger entries of its former names whatever version the thread is at, since a thread
   * migrated once may still hold entries and calls under them.
   */
  readonly toolRenames: ReadonlyMap<string, string>;
}

const renames = z.record(z.string().min(1), z.string().min(1));
const migrationSchema = z
  .object({
    from: z.string().min(1),
    nodes: renames.optional(),
    tools: renames.optional(),
    state: z.custom<GraphMigration["state"]>((value) => typeof value === "function").optional(),
  })
  .strict();

/**
 * Checks `compile()`'s migrations against the graph (`GRAPH_008`) and indexes them. A rename
 * must lead to a node or tool the graph has, from a name it no longer has; a former tool name
 * leads to one tool in every migration.
 */
export function compileMigrations<S extends BaseState>(
  given: unknown,
  nodes: ReadonlyMap<string, NodeLike<S>>,
): ThreadMigrations {
  const parsed = z.array(migrationSchema).safeParse(given ?? []);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = `migrations${issue.path.map((part) => `[${JSON.stringify(part)}]`).join("")}`;
    throw invalid(`${where}: ${issue.message}`);
  }
  const migrations = parsed.data as GraphMigration[];
  const tools = toolNames(nodes);
  const byFrom = new Map<string, GraphMigration>();
  const toolRenames = new Map<string, string>();
  for (const migration of migrations) {
    if (byFrom.has(migration.from)) throw invalid(`two migrations from '${migration.from}'`);
    byFrom.set(migration.from, migration);
    requireRenames(migration, "nodes", new Set(nodes.keys()));
    requireRenames(migration, "tools", tools);
    for (const [former, current] of Object.entries(migration.tools ?? {})) {
      const earlier = toolRenames.get(former);
      if (earlier !== undefined && earlier !== current) {
        throw invalid(`tool '${former}' is renamed to both '${earlier}' and '${current}'`);
      }
      toolRenames.set(former, current);
    }
  }
  return { byFrom, toolRenames };
}

function requireRenames(
  migration: GraphMigration,
  kind: "nodes" | "tools",
  current: ReadonlySet<string>,
): void {
  const what = kind === "nodes" ? "node" : "tool";
  for (const [former, replacement] of Object.entries(migration[kind] ?? {})) {
    const at = `migration from '${migration.from}': ${what} '${former}'`;
    if (!current.has(replacement)) {
      const known = [...current].join(", ") || "none";
      throw invalid(
        `${at} is renamed to '${replacement}', which this graph has no ${what} named (${what}s: ${known})`,
      );
    }
    if (current.has(former)) {
      throw invalid(`${at} is still a ${what} of this graph: a rename names a former ${what}`);
    }
  }
}

/** The names of the tools of every node that declares its tools (`GraphNode.tools`). */
function toolNames<S extends BaseState>(nodes: ReadonlyMap<string, NodeLike<S>>): Set<string> {
  const names = new Set<string>();
  for (const node of nodes.values()) {
    if (isGraphNode(node)) for (const tool of node.tools ?? []) names.add(tool.name);
  }
  return names;
}

function invalid(message: string): GraphValidationError {
  return new GraphValidationError("GRAPH_008", `compile(): ${message}`);
}
