import { END, Message, StateGraph } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { createApp } from "./app.js";

/** One answer of an operation in the document. */
interface Answer {
  content?: Record<string, { schema?: Record<string, unknown> & { $ref?: string } }>;
}

/** Routes the app serves that are not the API: the document itself and the inspector's files. */
const NOT_API = new Set([
  "GET /openapi.json",
  "GET /inspector",
  "GET /inspector/settings.json",
  "GET /inspector/*",
]);

/** `METHOD /path` of every route the app registers, with OpenAPI's `{param}` for Hono's `:param`. */
function registeredRoutes(app: ReturnType<typeof createApp>): string[] {
  const routes = app.routes
    .filter((r) => r.method !== "ALL") // middleware
    .map((r) => `${r.method} ${r.path.replace(/\/:(\w+)/g, "/{$1}")}`)
    .filter((r) => !NOT_API.has(r));
  return [...new Set(routes)].sort();
}

describe("/openapi.json", () => {
  const graph = new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile();
  const app = createApp({ graph, inspector: true });

  it("documents every route the app registers, and no other", async () => {
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(document.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(registeredRoutes(app));
  });

  it("documents a success answer with a content schema, and the error envelope, for every route", async () => {
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, Answer> }>>;
    };
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const successes = Object.entries(operation.responses).filter(([s]) => /^2\d\d$/.test(s));
        const described =
          successes.length > 0 &&
          successes.every(([, answer]) =>
            Object.values(answer.content ?? {}).some(
              (c) => c.schema && Object.keys(c.schema).length > 0,
            ),
          );
        // LangGraph's routes (no /v1 prefix) answer errors in LangGraph's shape.
        const error = /^\/(assistants|threads|runs|store)(\/|$)/.test(path)
          ? "#/components/schemas/LangGraphError"
          : "#/components/schemas/Error";
        const errors = ["4XX", "5XX"].every(
          (s) => operation.responses[s]?.content?.["application/json"]?.schema?.$ref === error,
        );
        if (!described || !errors) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("documents a past version's state: GET …/state takes ?version", async () => {
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const get = document.paths["/v1/threads/{thread_id}/state"]!.get!;
    expect(get.parameters).toContainEqual(
      expect.objectContaining({ name: "version", in: "query" }),
    );
  });
});
