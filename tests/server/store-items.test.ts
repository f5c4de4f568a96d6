import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { END, Message, StateGraph, type BaseState, type CompiledGraph } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import { userNamespace, type Store } from "@tenxgraph/core/store";
import { TenxgraphClient } from "@tenxgraph/client";
import { PgStore } from "@tenxgraph/postgres";
import { SqliteStore } from "@tenxgraph/sqlite";
import { STORE_KINDS, type StoreSpec } from "../support/store-spec.js";
import { caller, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/** The long-term store beside the checkpointer: the same SQLite file, or PostgreSQL schema. */
function longTermStore(spec: StoreSpec): Store & { close(): Promise<void> } {
  return spec.kind === "sqlite"
    ? new SqliteStore({ path: spec.path })
    : new PgStore({ postgresDsn: spec.dsn, schema: spec.schema });
}

/**
 * "remember X" puts `{ text: X }` at the user's `prefs`/`note`; "recall" answers the text of
 * `prefs`/`from-client`, which a client put.
 */
function memoryGraph(checkpointer: Checkpointer, store: Store) {
  return new StateGraph()
    .addNode("MAIN", async (state, ctx) => {
      const text = Message.text(state.messages.at(-1)!);
      const ns = userNamespace(ctx.userId, "prefs");
      if (text.startsWith("remember ")) {
        await ctx.store.put(ns, "note", { text: text.slice("remember ".length) });
        return Message.assistant("remembered");
      }
      const item = await ctx.store.get(ns, "from-client");
      return Message.assistant(`recalled: ${String(item?.value.text ?? "nothing")}`);
    })
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer, store }) as unknown as CompiledGraph<BaseState>;
}

describe.each(STORE_KINDS)("the graph's long-term store over HTTP on %s", (kind) => {
  let t: TestServer;
  let store: Store & { close(): Promise<void> };
  let alice: ReturnType<typeof caller>;
  let bob: ReturnType<typeof caller>;
  let aliceClient: TenxgraphClient;
  let bobClient: TenxgraphClient;

  beforeAll(async () => {
    t = await startTestServer(kind, `store_items_${kind}`, {
      build: (checkpointer, _effectLog, spec) => {
        store = longTermStore(spec);
        return memoryGraph(checkpointer, store);
      },
    });
    const [aliceToken, bobToken] = [await tokenFor("alice.a@example.com"), await tokenFor("bob")];
    alice = caller(t.base, aliceToken);
    bob = caller(t.base, bobToken);
    aliceClient = new TenxgraphClient({ baseUrl: t.base, token: aliceToken });
    bobClient = new TenxgraphClient({ baseUrl: t.base, token: bobToken });
  });
  afterAll(async () => {
    await store?.close();
    await t?.close();
  });

  const run = (as: ReturnType<typeof caller>, text: string, threadId: string) =>
    as("POST", "/v1/graph/invoke", {
      messages: [userMessage(text)],
      config: { thread_id: threadId },
    });

  it("reads over HTTP what a node put, and a node reads what a client put", async () => {
    const ran = await run(alice, "remember green tea", `t-${kind}-1`);
    expect(ran.status).toBe(200);
    const got = await alice("GET", "/v1/store/items?namespace=prefs&key=note");
    expect(got.body.data.item).toMatchObject({
      namespace: ["prefs"],
      key: "note",
      value: { text: "green tea" },
    });
    expect((await aliceClient.store.getItem(["prefs"], "note"))?.value).toEqual({
      text: "green tea",
    });
    // The store itself holds it under the user's label ('.' escaped).
    const raw = await store.get(["alice%2Ea@example%2Ecom", "prefs"], "note");
    expect(raw?.value).toEqual({ text: "green tea" });

    await aliceClient.store.putItem(["prefs"], "from-client", { text: "hello from the client" });
    const recalled = await run(alice, "recall", `t-${kind}-2`);
    expect(recalled.body.data.messages.at(-1).content[0].text).toBe(
      "recalled: hello from the client",
    );
    const found = await aliceClient.store.searchItems(["prefs"], { filter: { text: "green tea" } });
    expect(found.map((item) => item.key)).toEqual(["note"]);
    expect(await aliceClient.store.listNamespaces()).toEqual([["prefs"]]);
  });

  it("serves the same items on LangGraph's store routes", async () => {
    const got = await alice("GET", "/store/items?namespace=prefs&key=note");
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      namespace: ["prefs"],
      key: "note",
      value: { text: "green tea" },
    });
    expect(
      (await alice("PUT", "/store/items", { namespace: ["lg"], key: "k", value: { n: 1 } })).status,
    ).toBe(204);
    expect((await aliceClient.store.getItem(["lg"], "k"))?.value).toEqual({ n: 1 });
    await aliceClient.store.deleteItem(["lg"], "k");
    expect((await alice("GET", "/store/items?namespace=lg&key=k")).status).toBe(404);
  });

  it("keeps another user's token away from a user's items", async () => {
    expect(
      (await bob("GET", "/v1/store/items?namespace=prefs&key=note")).body.data.item,
    ).toBeNull();
    expect(await bobClient.store.getItem(["prefs"], "note")).toBeNull();
    // Naming alice's label as a namespace reaches only bob's own items.
    expect(await bobClient.store.getItem(["alice%2Ea@example%2Ecom", "prefs"], "note")).toBeNull();
    expect(await bobClient.store.searchItems([])).toEqual([]);
    expect(await bobClient.store.listNamespaces()).toEqual([]);
    expect((await bob("GET", "/store/items?namespace=prefs&key=note")).status).toBe(404);
    expect((await bob("POST", "/store/items/search", { namespace_prefix: [] })).body.items).toEqual(
      [],
    );
    // Bob's writes and deletes land in bob's items only.
    await bobClient.store.putItem(["prefs"], "note", { text: "bob was here" });
    await bobClient.store.deleteItem(["prefs"], "from-client");
    expect((await aliceClient.store.getItem(["prefs"], "note"))?.value).toEqual({
      text: "green tea",
    });
    expect(await aliceClient.store.getItem(["prefs"], "from-client")).not.toBeNull();
    expect((await bobClient.store.getItem(["prefs"], "note"))?.value).toEqual({
      text: "bob was here",
    });
  });

  it("refuses bad input with 422 naming the problem, and writes nothing", async () => {
    const dotted = await alice("PUT", "/v1/store/items", {
      namespace: ["a.b"],
      key: "k",
      value: {},
    });
    expect(dotted.status).toBe(422);
    const query = await alice("POST", "/v1/store/items/search", {
      namespace_prefix: [],
      query: "x",
    });
    expect(query.status).toBe(422);
    expect(query.body.error.code).toBe("STORE_002");
    expect((await alice("GET", "/v1/store/items?namespace=prefs")).status).toBe(422);
    expect(await aliceClient.store.listNamespaces()).toEqual([["prefs"]]);
  });
});
