import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { caller, isErrorEnvelope, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

const OWNED = "alice-thread";

/** Everything the store holds about a thread, to compare before and after another user tried. */
async function snapshot(t: TestServer, threadId: string) {
  return {
    checkpoint: await t.checkpointer.getCheckpoint(threadId),
    messages: await t.checkpointer.listMessages(threadId),
    ledger: await t.checkpointer.listCalls(threadId),
    stops: await t.checkpointer.countStopRequests(threadId),
  };
}

/** Every request that names a thread, as another user would send it: [method, path, body]. */
function threadRequests(messageId: string): [string, string, unknown][] {
  const T = `/v1/threads/${OWNED}`;
  const run = { messages: [userMessage("charge order 666")], config: { thread_id: OWNED } };
  return [
    ["GET", T, undefined],
    ["DELETE", T, { config: {} }],
    ["DELETE", T, undefined],
    ["GET", `${T}/state`, undefined],
    ["PUT", `${T}/state`, { config: {}, state: { owner: "bob" } }],
    ["DELETE", `${T}/state`, undefined],
    ["GET", `${T}/messages`, undefined],
    ["GET", `${T}/messages?search=order&offset=0&limit=5`, undefined],
    ["POST", `${T}/messages`, { config: {}, messages: [userMessage("injected")], metadata: {} }],
    ["GET", `${T}/messages/${messageId}`, undefined],
    ["DELETE", `${T}/messages/${messageId}`, { config: {} }],
    ["GET", `${T}/ledger`, undefined],
    ["GET", `${T}/in-doubt`, undefined],
    ["POST", `${T}/in-doubt/order-31-charge`, { action: "complete", result: "fake" }],
    // Ownership is checked before the body: a malformed body still gets the 403.
    ["POST", `${T}/in-doubt/order-31-charge`, { action: "bogus" }],
    ["DELETE", T, { config: "not an object" }],
    ["PUT", `${T}/state`, { state: "not an object" }],
    ["DELETE", `${T}/state`, { config: 5 }],
    ["POST", `${T}/messages`, { messages: [] }],
    ["DELETE", `${T}/messages/${messageId}`, { config: [] }],
    ["POST", "/v1/graph/invoke", run],
    // Nothing a client sends overrides the authenticated user.
    [
      "POST",
      "/v1/graph/invoke",
      { ...run, config: { thread_id: OWNED, user_id: "alice", user: { user_id: "alice" } } },
    ],
    ["POST", "/v1/graph/invoke", { continue: true, config: { thread_id: OWNED } }],
    ["POST", "/v1/graph/invoke", { resume: "yes", config: { thread_id: OWNED } }],
    ["POST", "/v1/graph/stream", run],
    ["POST", "/v1/graph/stream", { continue: true, config: { thread_id: OWNED } }],
    ["POST", "/v1/graph/stop", { thread_id: OWNED }],
    ["POST", "/v1/graph/stop", { thread_id: OWNED, config: { user_id: "alice" } }],
    ["POST", "/v1/graph/fix", { thread_id: OWNED }],
    ["GET", `/v1/observability/${OWNED}`, undefined],
  ];
}

describe.each(STORES)("thread ownership on $label", ({ kind }) => {
  let t: TestServer;
  let alice: ReturnType<typeof caller>;
  let bob: ReturnType<typeof caller>;
  beforeAll(async () => {
    t = await startTestServer(kind, `ownership_${kind}`);
    alice = caller(t.base, await tokenFor("alice"));
    bob = caller(t.base, await tokenFor("bob"));
    const r = await alice("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge order 31")],
      config: { thread_id: OWNED },
    });
    expect(r.status).toBe(200);
  });
  afterAll(() => t.close());

  it("answers 403 to another user on every endpoint and method that names the thread: 0 leaks, 0 writes", async () => {
    const before = await snapshot(t, OWNED);
    const secrets = ["order 31", ...before.messages.map((m) => m.id)];
    for (const [method, path, body] of threadRequests(before.messages[0]!.id)) {
      const r = await bob(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(isErrorEnvelope(r.body), `${method} ${path}`).toBe(true);
      for (const secret of secrets) expect(r.text, `${method} ${path} leaks`).not.toContain(secret);
    }
    for (const path of [
      `/v1/threads/${OWNED}`,
      `/v1/threads/${OWNED}/state`,
      `/v1/threads/${OWNED}/ledger`,
    ]) {
      const r = await bob("PATCH", path, {});
      expect(r.status).toBe(404);
      expect(isErrorEnvelope(r.body)).toBe(true);
    }
    expect(await snapshot(t, OWNED)).toEqual(before);
    expect(t.count(/charged order/)).toBe(1);
    expect(t.count(/order 666/)).toBe(0);
  });

  it("lists only the caller's threads; the owner still reaches everything", async () => {
    await bob("POST", "/v1/graph/invoke", {
      messages: [userMessage("hello")],
      config: { thread_id: "bob-thread" },
    });
    const bobs = (await bob("GET", "/v1/threads")).body.data.threads.map(
      (x: { thread_id: string }) => x.thread_id,
    );
    expect(bobs).toEqual(["bob-thread"]);
    const alices = (await alice("GET", "/v1/threads")).body.data.threads.map(
      (x: { thread_id: string }) => x.thread_id,
    );
    expect(alices).toEqual([OWNED]);
    expect((await alice("GET", `/v1/threads/${OWNED}/state`)).status).toBe(200);
    expect((await alice("GET", "/v1/threads/bob-thread/messages")).status).toBe(403);
    // A client-sent user does not make a thread someone else's either.
    await bob("POST", "/v1/graph/invoke", {
      messages: [userMessage("hi")],
      config: { thread_id: "made-by-bob", user_id: "alice" },
    });
    expect((await t.checkpointer.getCheckpoint("made-by-bob"))?.userId).toBe("bob");
  });

  it("scopes the memory store and files by user, whatever the request says", async () => {
    const stored = await alice("POST", "/v1/store/memories", {
      content: "alice's secret",
      memory_type: "semantic",
    });
    const id = stored.body.data.memory_id as string;
    const asAlice = { config: { user_id: "alice", user: { user_id: "alice" } }, options: {} };
    expect((await bob("POST", `/v1/store/memories/${id}`, asAlice)).body.data.memory).toBeNull();
    expect(
      (await bob("POST", "/v1/store/search", { ...asAlice, query: "secret" })).body.data.results,
    ).toEqual([]);
    expect((await bob("POST", "/v1/store/memories/list", asAlice)).body.data.memories).toEqual([]);
    expect(
      (await bob("PUT", `/v1/store/memories/${id}`, { ...asAlice, content: "bob was here" }))
        .status,
    ).toBe(404);
    expect((await bob("DELETE", `/v1/store/memories/${id}`, asAlice)).status).toBe(404);
    expect(
      (await bob("POST", "/v1/store/memories/forget", { ...asAlice, memory_type: "semantic" })).body
        .data.data.deleted,
    ).toBe(0);
    expect((await alice("POST", `/v1/store/memories/${id}`, {})).body.data.memory.content).toBe(
      "alice's secret",
    );
  });
});
