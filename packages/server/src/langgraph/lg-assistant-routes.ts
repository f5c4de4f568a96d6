import { z } from "zod";
import { readBody } from "../http/request-input.js";
import type { LgContext } from "./lg-context.js";
import { lgJson, lgRoutes } from "./lg-http.js";
import {
  allAssistants,
  assistantGraph,
  assistantSchemas,
  resolveAssistant,
} from "./lg-assistants.js";

const searchSchema = z.looseObject({
  graph_id: z.string().nullish(),
  name: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
});

/** The served graphs' assistants: search, count, get, graph, schemas (read-only). */
export const lgAssistantRoutes = lgRoutes([
  {
    method: "post",
    path: "/assistants/search",
    summary: "The served graphs' assistants (LangGraph)",
    body: searchSchema,
    responses: lgJson("Assistants", z.array(z.looseObject({}))),
    handler: async (c, ctx: LgContext) => {
      const query = await readBody(c, searchSchema);
      const found = allAssistants(ctx).filter(
        (a) =>
          (!query.graph_id || a.graph_id === query.graph_id) &&
          (!query.name || a.name.includes(query.name)) &&
          Object.entries(query.metadata ?? {}).every(([k, v]) => a.metadata[k] === v),
      );
      c.header("X-Pagination-Total", String(found.length));
      return c.json(found.slice(query.offset, query.offset + query.limit));
    },
  },
  {
    method: "post",
    path: "/assistants/count",
    summary: "How many assistants match (LangGraph)",
    body: searchSchema,
    responses: lgJson("How many", z.number()),
    handler: async (c, ctx) => {
      const query = await readBody(c, searchSchema);
      return c.json(
        allAssistants(ctx).filter((a) => !query.graph_id || a.graph_id === query.graph_id).length,
      );
    },
  },
  {
    method: "get",
    path: "/assistants/{assistant_id}",
    summary: "An assistant (LangGraph)",
    responses: lgJson("The assistant"),
    handler: (c, ctx) => c.json(resolveAssistant(ctx, c.req.param("assistant_id")!).assistant),
  },
  {
    method: "get",
    path: "/assistants/{assistant_id}/graph",
    summary: "An assistant's graph: nodes and edges (LangGraph)",
    responses: lgJson("The graph"),
    handler: (c, ctx) =>
      c.json(assistantGraph(resolveAssistant(ctx, c.req.param("assistant_id")!).graph)),
  },
  {
    method: "get",
    path: "/assistants/{assistant_id}/schemas",
    summary: "An assistant's state schemas (LangGraph)",
    responses: lgJson("The schemas"),
    handler: (c, ctx) => {
      const { assistant, graph } = resolveAssistant(ctx, c.req.param("assistant_id")!);
      return c.json(assistantSchemas(assistant.graph_id, graph));
    },
  },
]);
