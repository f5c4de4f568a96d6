import type { Hono } from "hono";
import { z } from "zod";
import { API_ROUTES } from "./api-routes.js";
import type { Route } from "../http/route-table.js";
import type { ServerEnv } from "../http/server-env.js";

const ERROR = {
  description: "Error envelope",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

/**
 * The OpenAPI 3.1 document of this server, made from its route tables (by default every
 * route of the API) with the zod schemas the routes validate with.
 */
export function openApiDocument(
  routes: readonly Route<never>[] = API_ROUTES,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { method, path, summary, body, query, response } of routes) {
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
      responses: {
        "200": { description: response ?? "`{ data, metadata }`" },
        "4XX": ERROR,
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "tenxgraph API", version: "0.1.0" },
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      schemas: {
        Error: {
          type: "object",
          properties: {
            error: {
              type: "object",
              properties: {
                code: { type: "string" },
                message: { type: "string" },
                details: { type: "array" },
              },
            },
            metadata: { type: "object" },
          },
        },
      },
    },
  };
}

/** `GET /openapi.json`. */
export function openApiRoutes(app: Hono<ServerEnv>): void {
  const document = openApiDocument();
  app.get("/openapi.json", (c) => c.json(document));
}
