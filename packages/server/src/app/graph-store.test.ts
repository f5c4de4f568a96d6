import { END, Message, StateGraph } from "@tenxgraph/core";
import { InMemoryStore, userNamespace } from "@tenxgraph/core/store";
import { describe, expect, it } from "vitest";
import { createApp } from "./app.js";

function graphWith(store?: InMemoryStore) {
  return new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile(store ? { store } : {});
}

const json = (method: string, body: unknown) => ({
  method,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("the server's long-term store", () => {
  it("is the graph's store: items and memories put over HTTP are in it", async () => {
    const store = new InMemoryStore();
    const app = createApp({ graph: graphWith(store), inspector: false });
    expect(app.context.store).toBe(store);
    const put = await app.request(
      "/v1/store/items",
      json("PUT", { namespace: ["prefs"], key: "k", value: { a: 1 }, index: false }),
    );
    expect(put.status).toBe(200);
    expect((await store.get(userNamespace(null, "prefs"), "k"))?.value).toEqual({ a: 1 });
    const memory = await app.request(
      "/v1/store/memories",
      json("POST", { content: "likes tea", memory_type: "semantic" }),
    );
    const { memory_id } = ((await memory.json()) as { data: { memory_id: string } }).data;
    const item = await store.get(userNamespace(null, "memories"), memory_id);
    expect(item?.value).toMatchObject({ content: "likes tea", memory_type: "semantic" });
  });

  it("refuses a store other than the graph's, and makes one when neither has it", () => {
    expect(() =>
      createApp({ graph: graphWith(new InMemoryStore()), store: new InMemoryStore() }),
    ).toThrow("`store` is not the store the graph was compiled with");
    const store = new InMemoryStore();
    expect(createApp({ graph: graphWith(), store, inspector: false }).context.store).toBe(store);
    expect(createApp({ graph: graphWith(), inspector: false }).context.store).toBeInstanceOf(
      InMemoryStore,
    );
  });
});
