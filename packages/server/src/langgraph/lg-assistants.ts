import { createHash } from "node:crypto";
import type { BaseState, CompiledGraph } from "@tenxgraph/core";
import { ApiError } from "../http/api-error.js";
import { graphInfo } from "../wire/graph-info.js";
import type { LgContext } from "./lg-context.js";

/** LangGraph's namespace for assistant ids made from a graph id (a fixed UUID, so ids match theirs). */
const GRAPH_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/** RFC 4122 version 5 (SHA-1) UUID of `name` in `namespace`. */
export function uuid5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  const hash = createHash("sha1").update(ns).update(name, "utf8").digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A served graph's assistant: one per graph, its id stable across restarts and servers. */
export interface LgAssistant {
  assistant_id: string;
  graph_id: string;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  name: string;
  description: null;
  version: number;
  created_at: string;
  updated_at: string;
}

/** Assistants exist as long as the process: they are the graphs it serves. */
const STARTED = new Date().toISOString();

export function assistantOf(graphId: string): LgAssistant {
  return {
    assistant_id: uuid5(graphId, GRAPH_NAMESPACE),
    graph_id: graphId,
    config: {},
    context: {},
    metadata: { created_by: "system" },
    name: graphId,
    description: null,
    version: 1,
    created_at: STARTED,
    updated_at: STARTED,
  };
}

/** Every served graph's assistant, the default graph's first. */
export function allAssistants(ctx: LgContext): LgAssistant[] {
  const ids = [
    ctx.graphs.defaultId,
    ...[...ctx.graphs.byId.keys()].filter((id) => id !== ctx.graphs.defaultId),
  ];
  return ids.map(assistantOf);
}

/**
 * The assistant an id names, and its graph: an assistant id, or a graph id (LangGraph's
 * clients may pass either). Otherwise a 404.
 */
export function resolveAssistant(
  ctx: LgContext,
  id: string,
): { assistant: LgAssistant; graph: CompiledGraph<BaseState> } {
  const byGraph = ctx.graphs.byId.get(id);
  if (byGraph) return { assistant: assistantOf(id), graph: byGraph };
  for (const [graphId, graph] of ctx.graphs.byId) {
    const assistant = assistantOf(graphId);
    if (assistant.assistant_id === id) return { assistant, graph };
  }
  throw new ApiError(404, "NOT_FOUND", `Assistant '${id}' not found`);
}

/** `GET /assistants/{id}/graph`: nodes and edges in LangGraph's drawable shape. */
export function assistantGraph(graph: CompiledGraph<BaseState>) {
  const info = graphInfo(graph, true);
  return {
    nodes: info.nodes.map((n) => ({
      id: n.id,
      type: "runnable",
      data: { id: [n.name], name: n.name },
    })),
    edges: info.edges.map((e) => ({ source: e.source, target: e.target })),
  };
}

/** `GET /assistants/{id}/schemas`: the state's fields as JSON Schema, from the initial state. */
export function assistantSchemas(graphId: string, graph: CompiledGraph<BaseState>) {
  const properties: Record<string, unknown> = {
    messages: { type: "array", items: { type: "object" }, title: "Messages" },
  };
  for (const [key, value] of Object.entries(graph.definition.initialState)) {
    if (key !== "messages") properties[key] = { title: key, default: value };
  }
  const state = { title: graphId, type: "object", properties };
  return {
    graph_id: graphId,
    input_schema: state,
    output_schema: state,
    state_schema: state,
    config_schema: null,
    context_schema: null,
  };
}
