import type { Hono } from "hono";
import { z } from "zod";
import {
  configBodySchema,
  deleteAfterSchema,
  graphInputSchema,
  historyQuerySchema,
  inDoubtDecisionBodySchema,
  pageQuerySchema,
  putMessagesSchema,
  pruneHistorySchema,
  putStateSchema,
  setupInputSchema,
  stateQuerySchema,
  stopInputSchema,
  updateStateSchema,
} from "../wire/request-schemas.js";
import type { ServerEnv } from "./server-env.js";
import { createRunSchema } from "../background/run-routes.js";
import {
  forgetMemorySchema,
  listMemorySchema,
  searchMemorySchema,
  storeMemorySchema,
  updateMemorySchema,
} from "../storage/memory-routes.js";

/** One documented operation: the same zod schemas the routes validate with. */
type Operation = [
  method: string,
  path: string,
  summary: string,
  body?: z.ZodType,
  query?: z.ZodType,
];

const T = "/v1/threads/{thread_id}";
const OPERATIONS: Operation[] = [
  ["get", "/ping", "Health check"],
  ["get", "/v1/graph", "Graph nodes and edges"],
  ["get", "/v1/graph/tools", "Tools per tool node"],
  ["get", "/v1/graph:StateSchema", "JSON Schema of the state"],
  [
    "post",
    "/v1/graph/invoke",
    "Run the graph to its end, an interrupt or a stop",
    graphInputSchema,
  ],
  [
    "post",
    "/v1/graph/stream",
    "Run the graph, streaming NDJSON chunks (SSE on Accept: text/event-stream)",
    graphInputSchema,
  ],
  ["post", "/v1/graph/stop", "Stop the thread's run on any process", stopInputSchema],
  [
    "post",
    "/v1/graph/setup",
    "Attach remote tools to tool nodes (403 with auth or MODE=production)",
    setupInputSchema,
  ],
  ["post", "/v1/graph/fix", "Nothing to fix: transcripts are append-only", stopInputSchema],
  ["get", "/v1/observability/{thread_id}", "Run traces (not kept: run_count 0)"],
  [
    "get",
    "/v1/threads",
    "The caller's threads, without subgraphs' child threads",
    undefined,
    pageQuerySchema,
  ],
  [
    "get",
    `${T}/children`,
    "The thread's child threads (its subgraphs' threads)",
    undefined,
    pageQuerySchema,
  ],
  ["get", T, "Thread details"],
  ["delete", T, "Delete the thread, its messages and ledger", configBodySchema],
  [
    "get",
    `${T}/state`,
    "The thread's state: the latest version, or ?version",
    undefined,
    stateQuerySchema,
  ],
  ["put", `${T}/state`, "Merge into the thread's state", putStateSchema],
  ["delete", `${T}/state`, "Clear the thread's state fields"],
  ["get", `${T}/messages`, "Page the transcript", undefined, pageQuerySchema],
  ["post", `${T}/messages`, "Append messages", putMessagesSchema],
  ["get", `${T}/messages/{message_id}`, "One message"],
  [
    "delete",
    `${T}/messages/{message_id}`,
    "Remove the message, as the thread's next version (earlier versions keep it)",
    configBodySchema,
  ],
  [
    "get",
    `${T}/history`,
    "The thread's versions, newest first (before a version)",
    undefined,
    historyQuerySchema,
  ],
  [
    "post",
    `${T}/state/update`,
    "Update the state through the graph's reducers (updateState), optionally as a node",
    updateStateSchema,
  ],
  [
    "post",
    `${T}/history/prune`,
    "Delete all but the newest keep_last versions",
    pruneHistorySchema,
  ],
  [
    "put",
    `${T}/delete-after`,
    "Delete the thread once this time has passed (null keeps it)",
    deleteAfterSchema,
  ],
  ["get", `${T}/ledger`, "The thread's tool ledger"],
  ["get", `${T}/in-doubt`, "Tool calls that may or may not have taken effect"],
  [
    "post",
    `${T}/in-doubt/{key}`,
    "Decide on an in-doubt call: retry, fail, or record a result",
    inDoubtDecisionBodySchema,
  ],
  [
    "post",
    `${T}/runs`,
    "Queue a background run (202); multitask_strategy: reject, enqueue or interrupt",
    createRunSchema,
  ],
  ["get", `${T}/runs`, "The thread's background runs, newest first", undefined, pageQuerySchema],
  ["get", `${T}/runs/{run_id}`, "One background run"],
  ["post", `${T}/runs/{run_id}/cancel`, "Cancel a background run"],
  ["get", `${T}/runs/{run_id}/join`, "Wait for a background run to end"],
  [
    "get",
    `${T}/runs/{run_id}/stream`,
    "A background run's events as SSE, from the start or after Last-Event-ID, then live",
  ],
  ["post", "/v1/store/memories", "Store a memory", storeMemorySchema],
  ["post", "/v1/store/search", "Search memories", searchMemorySchema],
  ["post", "/v1/store/memories/list", "List memories", listMemorySchema],
  ["post", "/v1/store/memories/forget", "Forget memories matching a filter", forgetMemorySchema],
  ["post", "/v1/store/memories/{memory_id}", "Get a memory"],
  ["put", "/v1/store/memories/{memory_id}", "Update a memory", updateMemorySchema],
  ["delete", "/v1/store/memories/{memory_id}", "Delete a memory"],
  ["post", "/v1/files/upload", "Upload a file (multipart, field 'file')"],
  ["get", "/v1/files/{file_id}", "A file's bytes"],
  ["get", "/v1/files/{file_id}/info", "A file's details"],
  ["get", "/v1/files/{file_id}/url", "A file's URL"],
  ["get", "/v1/config/multimodal", "Upload settings"],
];

const ERROR = {
  description: "Error envelope",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

/** The OpenAPI 3.1 document of this server, built from the routes' own zod schemas. */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [method, path, summary, body, query] of OPERATIONS) {
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
      responses: { "200": { description: "`{ data, metadata }`" }, "4XX": ERROR },
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
