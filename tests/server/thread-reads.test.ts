import {
  END,
  Message,
  StateGraph,
  silentLogger,
  type BaseState,
  type CompiledGraph,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { caller, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/** Thread reads made through a checkpointer, by method. */
const NO_READS = {
  getCheckpoint: 0,
  getCheckpointAndStops: 0,
  countStopRequests: 0,
  listMessages: 0,
};
const reads = { ...NO_READS };

/** The store, counting its thread reads (every other call passes through untouched). */
function counting(store: Checkpointer): Checkpointer {
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (typeof prop === "string" && prop in reads) reads[prop as keyof typeof reads]++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

function echoGraph(store: Checkpointer): CompiledGraph<BaseState> {
  return new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer: counting(store), logger: silentLogger }) as never;
}

/** A run over HTTP reads its thread as often as the same run in process: once. */
describe.each(STORES)("thread reads per run on $label", ({ kind }) => {
  let t: TestServer;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    t = await startTestServer(kind, `thread_reads_${kind}`, { build: echoGraph });
    call = caller(t.base, await tokenFor("alice"));
  });
  afterAll(() => t.close());

  const count = async (work: () => Promise<unknown>) => {
    Object.assign(reads, NO_READS);
    await work();
    return { ...reads };
  };

  it("reads the thread and its stop count once per invoke and stream, as in process", async () => {
    for (const id of ["local", "http-invoke", "http-stream"]) {
      await t.graph.invoke({ messages: [Message.user("hi")] }, { threadId: id, userId: "alice" });
    }
    const inProcess = await count(() =>
      t.graph.invoke({ messages: [Message.user("again")] }, { threadId: "local", userId: "alice" }),
    );
    const body = (threadId: string) => ({
      messages: [userMessage("again")],
      config: { thread_id: threadId },
      response_granularity: "full",
    });
    const invoke = await count(() => call("POST", "/v1/graph/invoke", body("http-invoke")));
    const stream = await count(() => call("POST", "/v1/graph/stream", body("http-stream")));
    expect(invoke).toEqual(inProcess);
    expect(stream).toEqual(inProcess);
    // One read of the thread and its stop count, in one round trip (getCheckpointAndStops).
    expect(inProcess).toMatchObject({ getCheckpoint: 0, getCheckpointAndStops: 1 });
    expect(inProcess.countStopRequests).toBe(0);
  });

  it("reads once per run from the AI SDK's chat and LangGraph's runs, too", async () => {
    // As a run in process: the thread and its stop count once, its transcript in one page.
    const inProcess = { ...NO_READS, getCheckpointAndStops: 1, listMessages: 1 };
    const text = (id: string) => ({ id, role: "user", parts: [{ type: "text", text: "hi" }] });
    const chat = (id: string) => ({ id: "chat", trigger: "submit-message", messages: [text(id)] });
    await drained(call("POST", "/v1/chat", chat("u1")));
    // A chat turn reads the thread once, for its check and its run together.
    expect(await count(() => drained(call("POST", "/v1/chat", chat("u2"))))).toEqual(inProcess);

    const threadId = "00000000-0000-4000-8000-00000000aaaa";
    const wait = { assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] } };
    await call("POST", "/threads", { thread_id: threadId });
    await call("POST", `/threads/${threadId}/runs/wait`, wait);
    const again = await count(() => call("POST", `/threads/${threadId}/runs/wait`, wait));
    expect(again).toEqual(inProcess);
  });

  it("checks a read of the thread with one read of its checkpoint, without the stop count", async () => {
    const details = await count(() => call("GET", "/v1/threads/local"));
    expect(details).toEqual({ ...NO_READS, getCheckpoint: 1 });
    const state = await count(() => call("GET", "/v1/threads/local/state"));
    expect(state).toMatchObject({ getCheckpointAndStops: 0, countStopRequests: 0 });
  });
});

/** Waits for a streamed answer to end (the run with it), whatever it held. */
async function drained(response: Promise<{ status: number }>): Promise<void> {
  expect((await response).status).toBe(200);
}
