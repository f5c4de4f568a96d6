/** `GET /v1/graph`: the graph's nodes and edges (node names in edges; `__start__`, `__end__` included). */
export interface GraphInfo {
  info: {
    node_count: number;
    edge_count: number;
    checkpointer: boolean;
    checkpointer_type: string | null;
    publisher: boolean;
    store: boolean;
    interrupt_before: string[] | null;
    interrupt_after: string[] | null;
    context_type: string | null;
    id_generator: string | null;
    id_type: string | null;
    state_type: string | null;
    state_fields: string[] | null;
    is_realtime: boolean;
  };
  nodes: { id: string; name: string }[];
  edges: { id: string; source: string; target: string }[];
}

/** `GET /v1/graph/tools`: every ToolNode's tools with their JSON Schemas. */
export interface GraphTools {
  node_count: number;
  tool_count: number;
  nodes: {
    node_name: string;
    tool_count: number;
    tools: { name: string; description: string; source: string; parameters: unknown }[];
  }[];
}

/** `GET /v1/graph:StateSchema`: a JSON Schema of the state. */
export interface StateJsonSchema {
  title: string;
  type: "object";
  properties: Record<string, unknown>;
}
