import { END, Message, StateGraph, type BaseState, type CompiledGraph } from "@tenxgraph/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caller, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

interface Summarized extends BaseState {
  context_summary: string | null;
  mood: string;
}

/**
 * 10xGraph's `AgentState` both ways over HTTP: `context` is the transcript, `context_summary` a
 * state field the graph's nodes and `PUT …/state` both write, `execution_meta` the run's position.
 * The mapping does not depend on the store: SQLite only.
 */
describe("AgentState fields over HTTP", () => {
  let t: TestServer;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    t = await startTestServer("sqlite", "agent_state", {
      build: (checkpointer) =>
        new StateGraph<Summarized>({ initialState: { context_summary: null, mood: "calm" } })
          .addNode("MAIN", (state) => ({
            messages: [Message.assistant("noted")],
            context_summary: `${state.messages.length} messages so far`,
          }))
          .addEdge("MAIN", END)
          .setEntryPoint("MAIN")
          .compile({ checkpointer }) as unknown as CompiledGraph<BaseState>,
    });
    call = caller(t.base, await tokenFor("alice"));
  });
  afterAll(() => t.close());

  it("lists AgentState's fields in GET /v1/graph, not the runtime's own names", async () => {
    const { info } = (await call("GET", "/v1/graph")).body.data;
    expect(info.state_fields).toEqual(["context", "context_summary", "execution_meta", "mood"]);
    const schema = (await call("GET", "/v1/graph:StateSchema")).body.data;
    expect(Object.keys(schema.properties)).toEqual(info.state_fields);
  });

  it("reads the summary a node wrote: in the state, and as invoke's summary", async () => {
    const run = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("hello")],
      config: { thread_id: "written-by-node" },
      response_granularity: "full",
    });
    expect(run.status).toBe(200);
    expect(run.body.data.summary).toBe("1 messages so far");
    expect(run.body.data.state.context_summary).toBe("1 messages so far");
    expect(run.body.data.state).not.toHaveProperty("messages");
    const state = (await call("GET", "/v1/threads/written-by-node/state")).body.data.state;
    expect(state).toMatchObject({ context_summary: "1 messages so far", mood: "calm" });
    expect(state.context.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
  });

  it("keeps the context_summary a client PUTs; null never overwrites it; a run reads it", async () => {
    await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("hello")],
      config: { thread_id: "put-summary" },
    });
    const put = await call("PUT", "/v1/threads/put-summary/state", {
      config: {},
      state: { context_summary: "the user greeted us", context: [userMessage("and again")] },
    });
    expect(put.status).toBe(200);
    expect(put.body.data.state.context_summary).toBe("the user greeted us");
    expect(put.body.data.state.context.at(-1).content[0].text).toBe("and again");
    const read = (await call("GET", "/v1/threads/put-summary/state")).body.data.state;
    expect(read.context_summary).toBe("the user greeted us");

    const kept = await call("PUT", "/v1/threads/put-summary/state", {
      config: {},
      state: { context_summary: null, mood: "busy" },
    });
    expect(kept.body.data.state).toMatchObject({
      context_summary: "the user greeted us",
      mood: "busy",
    });
    const partial = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("one more")],
      config: { thread_id: "put-summary" },
      response_granularity: "partial",
    });
    expect(partial.body.data.summary).toBe("4 messages so far");
    expect(partial.body.data.context).toHaveLength(5);
  });

  it("refuses a context_summary that is not a string with 422, and writes nothing", async () => {
    const before = (await call("GET", "/v1/threads/put-summary/state")).body.data.state;
    const r = await call("PUT", "/v1/threads/put-summary/state", {
      config: {},
      state: { context_summary: 42, mood: "angry" },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(JSON.stringify(r.body.error.details)).toContain("context_summary");
    const after = (await call("GET", "/v1/threads/put-summary/state")).body.data.state;
    expect(after).toEqual(before);
  });
});
