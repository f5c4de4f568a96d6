import type { GraphInfo, GraphTools, StateJsonSchema } from "@tenxgraph/client";
import { ToolNode, type BaseState, type CompiledGraph } from "@tenxgraph/core";
import { isRemoteTool } from "@tenxgraph/core/host";
import { SUMMARY_FIELD, wireStateFields } from "./wire-state.js";

/**
 * `GET /v1/graph`'s data, from the graph's own description (`getGraph()`): node and edge lists
 * with node names in edges (as 10xGraph's client and the inspector read them), START and END as
 * real nodes. A conditional edge without a path map may go anywhere: it is listed to every node
 * and END. A join is listed from each source, and a node's `ends` as edges of it.
 */
export function graphInfo(graph: CompiledGraph<BaseState>, store: boolean): GraphInfo {
  const view = graph.getGraph();
  const { before, after } = graph.breakpoints;
  return {
    info: {
      node_count: view.nodes.length,
      edge_count: view.edges.length,
      checkpointer: true,
      checkpointer_type: graph.checkpointer.constructor.name,
      publisher: false,
      store,
      interrupt_before: breakpointList(before),
      interrupt_after: breakpointList(after),
      context_type: null,
      id_generator: "uuidv7",
      id_type: "string",
      state_type: "BaseState",
      state_fields: wireStateFields(graph.definition.initialState),
      is_realtime: false,
    },
    nodes: view.nodes.map(({ id }) => ({ id, name: id })),
    edges: view.edges.map(({ source, target }) => ({ id: `${source}-${target}`, source, target })),
  };
}

/** A breakpoint's nodes on the wire: their names, `["*"]` for every node, `null` for none. */
function breakpointList(selection: "*" | readonly string[]): string[] | null {
  if (selection === "*") return ["*"];
  return selection.length > 0 ? [...selection] : null;
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
