import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { caller, isErrorEnvelope, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/** Over real HTTP on 127.0.0.1, on each store: threads, state, messages, memory store, files. */
describe.each(STORES)("thread, store and file endpoints on $label", ({ kind }) => {
  let t: TestServer;
  let call: ReturnType<typeof caller>;
  const threadId = `thread-${kind}`;
  beforeAll(async () => {
    t = await startTestServer(kind, `thread_endpoints_${kind}`);
    call = caller(t.base, await tokenFor("alice"));
    const seeded = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge order 12")],
      config: { thread_id: threadId },
    });
    expect(seeded.status).toBe(200);
  });
  afterAll(() => t.close());

  it("lists the thread and gives its details", async () => {
    const list = (await call("GET", "/v1/threads")).body.data.threads;
    expect(list).toEqual([
      expect.objectContaining({
        thread_id: threadId,
        user_id: "alice",
        thread_name: null,
        metadata: expect.objectContaining({ status: "completed" }),
      }),
    ]);
    expect((await call("GET", "/v1/threads?search=nothing-like-it")).body.data.threads).toEqual([]);
    expect(
      (await call("GET", `/v1/threads?search=${kind}&limit=1`)).body.data.threads,
    ).toHaveLength(1);
    expect((await call("GET", "/v1/threads?limit=0")).status).toBe(422);
    const details = (await call("GET", `/v1/threads/${threadId}`)).body.data;
    expect(details.thread_data.thread).toMatchObject({ thread_id: threadId, user_id: "alice" });
    expect((await call("GET", "/v1/threads/unknown")).body.data).toEqual({
      thread_data: { thread: null },
    });
  });

  it("pages messages in order, reads one, appends with minted ids, refuses deleting one", async () => {
    const all = (await call("GET", `/v1/threads/${threadId}/messages`)).body.data.messages;
    expect(all.map((m: { role: string }) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "tool",
      "assistant",
    ]);
    const page = (await call("GET", `/v1/threads/${threadId}/messages?offset=1&limit=2&search=`))
      .body.data.messages;
    expect(page.map((m: { message_id: string }) => m.message_id)).toEqual(
      all.slice(1, 3).map((m: { message_id: string }) => m.message_id),
    );
    const found = (await call("GET", `/v1/threads/${threadId}/messages?search=ORDER 12`)).body.data
      .messages;
    expect(found.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect((await call("GET", `/v1/threads/${threadId}/messages?offset=-1`)).status).toBe(422);

    const one = await call("GET", `/v1/threads/${threadId}/messages/${all[0].message_id}`);
    expect(one.body.data).toMatchObject({ message_id: all[0].message_id, role: "user" });
    const missing = await call("GET", `/v1/threads/${threadId}/messages/nope`);
    expect(missing.status).toBe(404);
    expect(isErrorEnvelope(missing.body)).toBe(true);

    // The real client sends its Message objects as they are: id null, timestamp in milliseconds.
    const note = {
      role: "user",
      content: [{ type: "text", text: "a note", annotations: [] }],
      message_id: null,
      timestamp: Date.now(),
      delta: false,
    };
    const added = await call("POST", `/v1/threads/${threadId}/messages`, {
      config: {},
      messages: [note, userMessage("another")],
      metadata: {},
    });
    expect(added.body.data).toMatchObject({ success: true, message: "Messages put successfully" });
    const after = (await call("GET", `/v1/threads/${threadId}/messages?offset=6`)).body.data
      .messages;
    expect(after.map((m: { content: { text: string }[] }) => m.content[0]!.text)).toEqual([
      "a note",
      "another",
    ]);
    expect(new Set(after.map((m: { message_id: string }) => m.message_id)).size).toBe(2);
    expect(Math.abs(after[0].timestamp - Date.now() / 1000)).toBeLessThan(3600);
    expect((await call("POST", `/v1/threads/${threadId}/messages`, { messages: [] })).status).toBe(
      422,
    );

    const del = await call("DELETE", `/v1/threads/${threadId}/messages/${all[0].message_id}`, {
      config: {},
    });
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ success: true, message: "Message deleted successfully" });
    const gone = await call("GET", `/v1/threads/${threadId}/messages/${all[0].message_id}`);
    expect(gone.status).toBe(404);
    const again = await call("DELETE", `/v1/threads/${threadId}/messages/${all[0].message_id}`, {
      config: {},
    });
    expect(again.status).toBe(404);
    // The version before the delete still holds the message.
    const before = await call(
      "GET",
      `/v1/threads/${threadId}/state?version=${del.body.data.data.version - 1}`,
    );
    const ids = before.body.data.state.context.map((m: { message_id: string }) => m.message_id);
    expect(ids).toContain(all[0].message_id);
  });

  it("reads, merges and clears the state; the transcript stays", async () => {
    const state = (await call("GET", `/v1/threads/${threadId}/state`)).body.data.state;
    expect(state.execution_meta).toMatchObject({
      status: "completed",
      current_node: "__end__",
      thread_id: threadId,
    });
    const put = await call("PUT", `/v1/threads/${threadId}/state`, {
      config: {},
      state: {
        prefs: { tea: "green", milk: null },
        execution_meta: { status: "error" },
        context: [userMessage("added by put")],
      },
    });
    expect(put.body.data.state.prefs).toEqual({ tea: "green" });
    expect(put.body.data.state.execution_meta.status).toBe("completed");
    expect(put.body.data.state.context.at(-1).content[0].text).toBe("added by put");
    const merged = await call("PUT", `/v1/threads/${threadId}/state`, {
      config: {},
      state: { prefs: { milk: "oat" } },
    });
    expect(merged.body.data.state.prefs).toEqual({ tea: "green", milk: "oat" });
    expect((await call("PUT", `/v1/threads/${threadId}/state`, { config: {} })).status).toBe(422);

    const cleared = await call("DELETE", `/v1/threads/${threadId}/state`);
    expect(cleared.body.data).toMatchObject({
      success: true,
      message: "State cleared successfully",
    });
    const after = (await call("GET", `/v1/threads/${threadId}/state`)).body.data.state;
    expect(after).not.toHaveProperty("prefs");
    expect(after.context.length).toBeGreaterThan(6);
    expect((await call("GET", "/v1/threads/unknown/state")).body.data).toEqual({ state: null });
  });

  it("keeps memories per user: store, search, get, list, update, delete, forget", async () => {
    const bob = caller(t.base, await tokenFor("bob"));
    const stored = await call("POST", "/v1/store/memories", {
      config: {},
      options: {},
      content: "likes green tea",
      memory_type: "semantic",
      category: "prefs",
      metadata: { source: "chat" },
    });
    expect(stored.body.metadata.message).toBe("Memory stored successfully");
    const id = stored.body.data.memory_id;
    await call("POST", "/v1/store/memories", { content: "lives in Oslo", memory_type: "episodic" });
    const search = {
      config: {},
      options: {},
      query: "green tea",
      memory_type: "semantic",
      category: "",
      limit: 10,
      score_threshold: 0,
      filters: {},
      retrieval_strategy: "similarity",
      distance_metric: "cosine",
      max_tokens: 4000,
    };
    const found = (await call("POST", "/v1/store/search", search)).body.data.results;
    expect(found.map((r: { id: string }) => r.id)).toEqual([id]);
    expect(found[0]).toMatchObject({
      content: "likes green tea",
      user_id: "alice",
      memory_type: "semantic",
    });
    expect((await bob("POST", "/v1/store/search", search)).body.data.results).toEqual([]);
    expect((await call("POST", "/v1/store/search", { ...search, query: " " })).status).toBe(422);
    expect(
      (await call("POST", `/v1/store/memories/${id}`, { config: {}, options: {} })).body.data.memory
        .content,
    ).toBe("likes green tea");
    expect((await bob("POST", `/v1/store/memories/${id}`, {})).body.data.memory).toBeNull();
    expect(
      (await call("POST", "/v1/store/memories/list", { limit: 100 })).body.data.memories,
    ).toHaveLength(2);
    expect((await bob("PUT", `/v1/store/memories/${id}`, { content: "hacked" })).status).toBe(404);
    expect(
      (await call("PUT", `/v1/store/memories/${id}`, { content: "likes black tea", metadata: {} }))
        .body.data.success,
    ).toBe(true);
    expect((await call("POST", `/v1/store/memories/${id}`)).body.data.memory.content).toBe(
      "likes black tea",
    );
    expect((await bob("DELETE", `/v1/store/memories/${id}`, {})).status).toBe(404);
    expect(
      (await call("DELETE", `/v1/store/memories/${id}`, { config: {}, options: {} })).body.data
        .success,
    ).toBe(true);
    const forgot = await call("POST", "/v1/store/memories/forget", { memory_type: "episodic" });
    expect(forgot.body.data).toEqual({ success: true, data: { deleted: 1 } });
    expect((await call("POST", "/v1/store/memories/list", {})).body.data.memories).toEqual([]);
  });

  it("uploads a file and serves it to its owner only", async () => {
    const form = new FormData();
    form.append("file", new Blob(["hello file"], { type: "text/plain" }), "note.txt");
    const token = await tokenFor("alice");
    const up = await fetch(`${t.base}/v1/files/upload`, {
      method: "POST",
      body: form,
      headers: { authorization: `Bearer ${token}` },
    });
    const info = ((await up.json()) as { data: Record<string, unknown> }).data;
    expect(info).toMatchObject({
      mime_type: "text/plain",
      size_bytes: 10,
      filename: "note.txt",
      extracted_text: "hello file",
    });
    const raw = await fetch(`${t.base}/v1/files/${String(info.file_id)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(raw.headers.get("content-type")).toBe("text/plain");
    expect(await raw.text()).toBe("hello file");
    expect((await call("GET", `/v1/files/${String(info.file_id)}/info`)).body.data.size_bytes).toBe(
      10,
    );
    expect((await call("GET", `/v1/files/${String(info.file_id)}/url`)).body.data.url).toBe(
      `/v1/files/${String(info.file_id)}`,
    );
    const bob = caller(t.base, await tokenFor("bob"));
    expect((await bob("GET", `/v1/files/${String(info.file_id)}`)).status).toBe(404);
    expect((await call("GET", "/v1/config/multimodal")).body.data.media_max_size_mb).toBe(25);
    expect((await call("POST", "/v1/files/upload", { not: "multipart" })).status).toBe(400);
  });

  it("lists no child thread, and deletes the thread with its messages, ledger and children", async () => {
    // A subgraph's thread, as its run's first write makes it.
    const child = `${threadId}|WORKER@0`;
    await t.checkpointer.putCheckpoint({
      threadId: child,
      parentThreadId: threadId,
      incarnation: "child's life",
      userId: "alice",
      expectedVersion: 0,
      step: 0,
      currentNode: null,
      status: "completed",
      values: {},
      interrupts: [],
      resumeAnswers: {},
      newMessages: [],
    });
    const listed = (await call("GET", "/v1/threads")).body.data.threads;
    expect(listed.map((thread: { thread_id: string }) => thread.thread_id)).toEqual([threadId]);

    const del = await call("DELETE", `/v1/threads/${threadId}`, { config: {} });
    expect(del.body.data).toMatchObject({ success: true, message: "Thread deleted successfully" });
    expect((await call("GET", `/v1/threads/${threadId}/state`)).body.data.state).toBeNull();
    expect((await call("GET", "/v1/threads")).body.data.threads).toEqual([]);
    expect(await t.checkpointer.listCalls(threadId)).toEqual([]);
    expect(await t.checkpointer.getCheckpoint(child)).toBeNull();
    const again = await call("DELETE", `/v1/threads/${threadId}`);
    expect(again.status).toBe(404);
    expect(isErrorEnvelope(again.body)).toBe(true);
  });
});
