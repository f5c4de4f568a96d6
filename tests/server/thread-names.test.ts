import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { caller, ndjson, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/** What the generator was asked, to show a name is made once per thread. */
const asked: string[][] = [];

/** Thread names: made once for a new thread, stored with it, listed, kept. */
describe.each(STORES)("thread names on $label", ({ kind }) => {
  let t: TestServer;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    asked.length = 0;
    t = await startTestServer(kind, `thread_names_${kind}`, {
      app: {
        threadNameGenerator: (texts) => {
          asked.push(texts);
          return `about: ${texts.join(" ")}`;
        },
      },
    });
    call = caller(t.base, await tokenFor("alice"));
  });
  afterAll(() => t.close());

  it("names a new thread once, stores the name with it, lists it and keeps it", async () => {
    const first = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("where is order 5")],
      config: { thread_id: "named" },
    });
    expect(first.body.data.meta).toMatchObject({
      is_new_thread: true,
      thread_name: "about: where is order 5",
    });
    const second = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("and order 6")],
      config: { thread_id: "named" },
    });
    expect(second.body.data.meta.thread_name).toBeUndefined();
    expect(asked).toEqual([["where is order 5"]]);

    const details = (await call("GET", "/v1/threads/named")).body.data.thread_data.thread;
    expect(details.thread_name).toBe("about: where is order 5");
    const listed = (await call("GET", "/v1/threads")).body.data.threads;
    expect(listed.find((x: { thread_id: string }) => x.thread_id === "named").thread_name).toBe(
      "about: where is order 5",
    );
    // Searching finds a thread by its name as well as by its id.
    const byName = (await call("GET", "/v1/threads?search=order%205")).body.data.threads;
    expect(byName.map((x: { thread_id: string }) => x.thread_id)).toEqual(["named"]);
    expect((await call("GET", "/v1/threads?search=order%207")).body.data.threads).toEqual([]);
    // A field of the thread, not of its state: hidden from the state, not writable, kept on clear.
    const state = (await call("GET", "/v1/threads/named/state")).body.data.state;
    expect(JSON.stringify(state)).not.toContain("about:");
    await call("PUT", "/v1/threads/named/state", { state: { __thread_name__: "hijacked" } });
    expect((await call("DELETE", "/v1/threads/named/state")).status).toBe(200);
    const after = (await call("GET", "/v1/threads/named")).body.data.thread_data.thread;
    expect(after.thread_name).toBe("about: where is order 5");
  });

  it("streams the name as the last line of a new thread's stream, stored as well", async () => {
    const r = await call("POST", "/v1/graph/stream", {
      messages: [userMessage("hello")],
      config: { thread_id: "streamed" },
    });
    expect(ndjson(r.text).at(-1)).toMatchObject({
      event: "updates",
      data: { status: "completed" },
      metadata: { thread_name: "about: hello", thread_id: "streamed" },
    });
    const details = (await call("GET", "/v1/threads/streamed")).body.data.thread_data.thread;
    expect(details.thread_name).toBe("about: hello");
  });
});
