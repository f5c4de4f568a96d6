import type { GraphInfo, GraphTools, StateJsonSchema } from "@tenxgraph/client";
import { END, ToolNode, type BaseState, type CompiledGraph } from "@tenxgraph/core";
import { isRemoteTool } from "@tenxgraph/core/host";
import { SUMMARY_FIELD, wireStateFields } from "./wire-state.js";

/** The `__start__` node 10xGraph lists before the entry point. */
const START = "__start__";

/**
 * `GET /v1/graph`'s data: node and edge lists with node names in edges (as 10xGraph's client
 * and playground read them), START and END as real nodes. A conditional edge without a path
 * map may go anywhere: it is listed to every node and END. A join is listed from each source,
 * and a node's `ends` (where its `Command`s may go) as edges of it.
 */
export function graphInfo(graph: CompiledGraph<BaseState>, store: boolean): GraphInfo {
  const { nodes, edges, ends, entryPoint, initialState } = graph.definition;
  const names = [START, ...nodes.keys(), END];
  const pairs: [string, string][] = [[START, entryPoint]];
  for (const from of nodes.keys()) {
    const targets = (edges.get(from) ?? []).flatMap((edge) =>
      edge.kind !== "conditional"
        ? [edge.to]
        : edge.pathMap
          ? Object.values(edge.pathMap)
          : [...nodes.keys(), END],
    );
    for (const to of new Set([...targets, ...(ends.get(from) ?? [])])) pairs.push([from, to]);
  }
  return {
    info: {
      node_count: names.length,
      edge_count: pairs.length,
      checkpointer: true,
      checkpointer_type: graph.checkpointer.constructor.name,
      publisher: false,
      store,
      interrupt_before: null,
      interrupt_after: null,
      context_type: null,
      id_generator: "uuidv7",
      id_type: "string",
      state_type: "BaseState",
      state_fields: wireStateFields(initialState),
      is_realtime: false,
    },
    nodes: names.map((name) => ({ id: name, name })),
    edges: pairs.map(([source, target]) => ({ id: `${source}-${target}`, source, target })),
  };
}

/** `GET /v1/graph/tools`: the tools of every ToolNode. */
export function graphTools(graph: CompiledGraph<BaseState>): GraphTools {
  const toolNodes = [...graph.definition.nodes].filter(([, node]) => node instanceof ToolNode);
  const list = toolNodes.map(([name, node]) => {
    const tools = (node as ToolNode).tools.map((t) => ({
      name: t.name,
      description: t.description,
      source: isRemoteTool(t) ? "remote" : "local",
      parameters: t.jsonSchema(),
    }));
    return { node_name: name, tool_count: tools.length, tools };
  });
  return {
    node_count: list.length,
    tool_count: list.reduce((n, node) => n + node.tool_count, 0),
    nodes: list,
  };
}

/**
 * `GET /v1/graph:StateSchema`: a JSON Schema of the wire state (its properties are
 * `state_fields`), from the graph's initial fields.
 */
export function stateSchema(graph: CompiledGraph<BaseState>): StateJsonSchema {
  const properties: Record<string, unknown> = {
    context: { type: "array", items: { type: "object" }, title: "Context" },
    context_summary: { anyOf: [{ type: "string" }, { type: "null" }], title: "Context Summary" },
    execution_meta: { type: "object", title: "Execution Meta" },
  };
  for (const [key, value] of Object.entries(graph.definition.initialState)) {
    // The graph's own summary field is AgentState's, listed above; the transcript is `context`.
    if (key === SUMMARY_FIELD || key === "messages") continue;
    properties[key] = { type: jsonType(value), title: key, default: value };
  }
  return { title: "AgentState", type: "object", properties };
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value === "object" ? "object" : typeof value;
}
