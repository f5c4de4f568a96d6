import type { Hono } from "hono";
import { z } from "zod";
import { API_ROUTES } from "./api-routes.js";
import type { Route, RouteResponse } from "../http/route-table.js";
import { errorEnvelopeSchema, responseMetadataSchema } from "../http/envelope.js";
import type { ServerEnv } from "../http/server-env.js";
import { LANGGRAPH_ROUTES } from "../langgraph/lg-routes.js";
import { lgErrorSchema } from "../langgraph/lg-http.js";

const ERROR = {
  description: "The error envelope",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

const LANGGRAPH_ERROR = {
  description: "LangGraph's error answer",
  content: { "application/json": { schema: { $ref: "#/components/schemas/LangGraphError" } } },
};

/** A schema's JSON Schema, as what the server sends (`io: "output"`). */
function answerSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
}

/** OpenAPI's `content` of one success answer. */
function answerContent(response: RouteResponse): Record<string, { schema: unknown }> {
  if (response.body === "bytes") {
    return { "application/octet-stream": { schema: { type: "string", format: "binary" } } };
  }
  const item = answerSchema(response.schema);
  switch (response.body) {
    case "ndjson":
      return { "application/x-ndjson": { schema: item }, "text/event-stream": { schema: item } };
    case "sse":
      return { "text/event-stream": { schema: item } };
    case "json":
      return { "application/json": { schema: item } };
    default:
      return {
        "application/json": {
          schema: {
            type: "object",
            properties: { data: item, metadata: { $ref: "#/components/schemas/Metadata" } },
            required: ["data", "metadata"],
          },
        },
      };
  }
}

/** OpenAPI's `responses` of a route: its success answers, then the error envelope. */
function answers(route: Route<never>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    out[status] = { description: response.description, content: answerContent(response) };
  }
  const error = route.errors === "detail" ? LANGGRAPH_ERROR : ERROR;
  out["4XX"] = error;
  out["5XX"] = error;
  return out;
}

/**
 * The OpenAPI 3.1 document of this server, made from its route tables (by default every
 * route of the API) with the zod schemas the routes validate with.
 */
export function openApiDocument(
  routes: readonly Route<never>[] = [...API_ROUTES, ...LANGGRAPH_ROUTES],
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const { method, path, summary, body, query } = route;
    const params: Record<string, unknown>[] = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    if (query) {
      const schema = z.toJSONSchema(query, { io: "input", unrepresentable: "any" }) as {
        properties?: Record<string, unknown>;
      };
      for (const [name, s] of Object.entries(schema.properties ?? {}))
        params.push({ name, in: "query", required: false, schema: s });
    }
    (paths[path] ??= {})[method] = {
      summary,
      ...(params.length ? { parameters: params } : {}),
      ...(body
        ? {
            requestBody: {
              content: {
                "application/json": {
                  schema: z.toJSONSchema(body, { io: "input", unrepresentable: "any" }),
                },
              },
            },
          }
        : {}),
      responses: answers(route),
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "tenxgraph API", version: "0.1.0" },
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      schemas: {
        Error: answerSchema(errorEnvelopeSchema),
        Metadata: answerSchema(responseMetadataSchema),
        LangGraphError: answerSchema(lgErrorSchema),
      },
    },
  };
}

/** `GET /openapi.json`. */
export function openApiRoutes(app: Hono<ServerEnv>): void {
  // Made at the first request: a server that is never asked does not pay for it.
  let document: Record<string, unknown> | undefined;
  app.get("/openapi.json", (c) => c.json((document ??= openApiDocument())));
}
