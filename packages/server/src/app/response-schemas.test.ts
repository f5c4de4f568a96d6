import { END, Message, StateGraph } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { errorEnvelopeSchema } from "../http/envelope.js";
import type { RouteResponse } from "../http/route-table.js";
import { API_ROUTES } from "./api-routes.js";
import { createApp } from "./app.js";

/** The schema a route's table gives for `status`. */
function schemaOf(method: string, path: string, status = 200): z.ZodType {
  const route = API_ROUTES.find((r) => r.method === method && r.path === path);
  const answer = route?.responses[status] as RouteResponse | undefined;
  if (!answer || answer.body === "bytes") throw new Error(`no schema for ${method} ${path}`);
  return answer.schema;
}

/**
 * `value` is one the schema allows, and has no field the schema leaves out (a plain
 * `z.object` drops unknown keys: what it gives back would then differ).
 */
function expectDescribed(schema: z.ZodType, value: unknown): void {
  const parsed = schema.safeParse(value);
  expect(parsed.error?.issues ?? []).toEqual([]);
  expect(parsed.data).toEqual(value);
}

describe("the route tables' response schemas hold for real answers", () => {
  const graph = new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile();
  const app = createApp({ graph, inspector: false });
  const threadId = "schema-thread";

  async function data(method: string, url: string, body?: unknown): Promise<unknown> {
    const response = await app.request(url, {
      method: method.toUpperCase(),
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: unknown }).data;
  }

  it("a run, then the thread's routes and the graph's", async () => {
    const run = await data("post", "/v1/graph/invoke", {
      messages: [{ role: "user", content: "hi" }],
      config: { thread_id: threadId },
      response_granularity: "full",
    });
    expectDescribed(schemaOf("post", "/v1/graph/invoke"), run);
    const thread = `/v1/threads/${threadId}`;
    const reads: [string, string][] = [
      ["/ping", "/ping"],
      ["/v1/graph", "/v1/graph"],
      ["/v1/graph/tools", "/v1/graph/tools"],
      ["/v1/graph:StateSchema", "/v1/graph:StateSchema"],
      ["/v1/threads", "/v1/threads"],
      ["/v1/threads/{thread_id}", thread],
      ["/v1/threads/{thread_id}/state", `${thread}/state`],
      ["/v1/threads/{thread_id}/messages", `${thread}/messages`],
      ["/v1/threads/{thread_id}/history", `${thread}/history`],
      ["/v1/threads/{thread_id}/ledger", `${thread}/ledger`],
      ["/v1/threads/{thread_id}/in-doubt", `${thread}/in-doubt`],
    ];
    for (const [path, url] of reads) expectDescribed(schemaOf("get", path), await data("get", url));
    const update = await data("post", `${thread}/state/update`, { values: { note: "x" } });
    expectDescribed(schemaOf("post", "/v1/threads/{thread_id}/state/update"), update);
  });

  it("each line of a stream", async () => {
    const response = await app.request("/v1/graph/stream", {
      method: "POST",
      body: JSON.stringify({
        messages: [{ role: "user", content: "hi" }],
        config: { thread_id: "schema-stream" },
      }),
      headers: { "content-type": "application/json" },
    });
    const lines = (await response.text()).split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines)
      expectDescribed(schemaOf("post", "/v1/graph/stream"), JSON.parse(line));
  });

  it("an error: the error envelope", async () => {
    const response = await app.request("/v1/threads/missing-thread/messages/nope");
    expect(response.status).toBe(404);
    expectDescribed(errorEnvelopeSchema, await response.json());
  });
});
