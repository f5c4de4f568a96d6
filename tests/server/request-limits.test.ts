import { InMemoryCheckpointer, type BaseState, type CompiledGraph } from "@tenxgraph/core";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES, type StoreKind } from "../support/store-spec.js";
import { caller, isErrorEnvelope, TEST_JWT_SECRET, tokenFor, userMessage } from "./support/http.js";
import { buildTestGraph } from "./support/test-graph.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/** A JSON value `depth` arrays deep, as text (too deep for a recursive writer to build). */
function nested(depth: number): string {
  return "[".repeat(depth) + "1" + "]".repeat(depth);
}

const sign = (claims: Record<string, unknown>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));

const KINDS: { label: string; kind: StoreKind; memory?: true }[] = [
  { label: "memory", kind: "sqlite", memory: true },
  ...STORES.map(({ label, kind }) => ({ label, kind })),
];

/**
 * Issue 27, item 11: JSON nested too deep is refused before it is written (it used to wedge the
 * thread: every later run failed 500), and ids no store can hold are 422 naming the field (401
 * for a token's user id), the same on every store.
 */
describe.each(KINDS)("request limits on $label", ({ label, kind, memory }) => {
  let t: TestServer;
  let alice: ReturnType<typeof caller>;
  const thread = `limits-${label}`;
  beforeAll(async () => {
    t = await startTestServer(kind, `request_limits_${label}`, {
      ...(memory
        ? {
            build: (_store, effectLog) =>
              buildTestGraph(
                { effectLog },
                new InMemoryCheckpointer(),
              ) as unknown as CompiledGraph<BaseState>,
          }
        : {}),
    });
    if (memory) t.checkpointer = t.graph.checkpointer;
    alice = caller(t.base, await tokenFor("alice"));
    const seeded = await alice("POST", "/v1/graph/invoke", {
      messages: [userMessage("hello")],
      config: { thread_id: thread },
    });
    expect(seeded.status).toBe(200);
  });
  afterAll(() => t.close());

  it("refuses JSON nested 3,000 levels deep with 422 JSON_TOO_DEEP, writes nothing, and the thread still runs", async () => {
    const before = await t.checkpointer.getCheckpoint(thread);
    const deep = nested(3000);
    const bodies: [string, string, string][] = [
      ["POST", `/v1/threads/${thread}/state/update`, `{"values":{"deep":${deep}}}`],
      ["PUT", `/v1/threads/${thread}/state`, `{"state":{"deep":${deep}}}`],
      [
        "POST",
        "/v1/graph/invoke",
        `{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],` +
          `"initial_state":{"deep":${deep}},"config":{"thread_id":"${thread}"}}`,
      ],
    ];
    for (const [method, path, body] of bodies) {
      const answer = await alice(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(422);
      expect(isErrorEnvelope(answer.body)).toBe(true);
      expect(answer.body.error.code).toBe("JSON_TOO_DEEP");
    }
    expect(await t.checkpointer.getCheckpoint(thread)).toEqual(before);
    // Within the limit is fine.
    const ok = await alice("POST", `/v1/threads/${thread}/state/update`, {
      values: { shallow: JSON.parse(nested(40)) },
    });
    expect(ok.status).toBe(200);
    const run = await alice("POST", "/v1/graph/invoke", {
      messages: [userMessage("still here")],
      config: { thread_id: thread },
    });
    expect(run.status).toBe(200);
  });

  it("answers ids no store can hold with 422 naming the field, and nothing is written", async () => {
    const bad = ["x".repeat(257), "x".repeat(512), "nul\u0000id", "lone\ud800half", "\udc00"];
    const threadsBefore = await t.checkpointer.listThreads();
    for (const id of bad) {
      const run = await alice("POST", "/v1/graph/invoke", {
        messages: [userMessage("hi")],
        config: { thread_id: id },
      });
      expect(run.status, JSON.stringify(id)).toBe(422);
      expect(run.body.error.code).toBe("VALIDATION_ERROR");
      expect(run.body.error.details[0].loc).toEqual(["body", "config", "thread_id"]);
      const stop = await alice("POST", "/v1/graph/stop", { thread_id: id });
      expect(stop.status, JSON.stringify(id)).toBe(422);
      expect(stop.body.error.details[0].loc).toEqual(["body", "thread_id"]);
    }
    for (const id of ["x".repeat(257), "x".repeat(512), "nul%00id"]) {
      for (const [method, path, body] of [
        ["GET", `/v1/threads/${id}`, undefined],
        ["GET", `/v1/threads/${id}/state`, undefined],
        ["PUT", `/v1/threads/${id}/state`, { state: { a: 1 } }],
        ["POST", `/v1/threads/${id}/messages`, { messages: [userMessage("hi")] }],
        ["GET", `/v1/threads/${thread}/messages/${id}`, undefined],
      ] as [string, string, unknown][]) {
        const answer = await alice(method, path, body);
        expect(answer.status, `${method} ${path.slice(0, 40)}`).toBe(422);
        expect(answer.body.error.code).toBe("VALIDATION_ERROR");
        expect(answer.body.error.details[0].loc[0]).toBe("path");
      }
    }
    expect(await t.checkpointer.listThreads()).toEqual(threadsBefore);
    // Ids inside a body: a message's id, a tool call's, one to remove.
    const versionBefore = (await t.checkpointer.getCheckpoint(thread))?.version;
    for (const id of ["m".repeat(257), "nul\u0000id", "lone\ud800"]) {
      const message = { ...userMessage("hi"), message_id: id };
      const appended = await alice("POST", `/v1/threads/${thread}/messages`, {
        messages: [message],
      });
      expect(appended.status, JSON.stringify(id)).toBe(422);
      expect(appended.body.error.details[0].loc).toEqual(["body", "messages", "0", "message_id"]);
      const run = await alice("POST", "/v1/graph/invoke", {
        messages: [message],
        config: { thread_id: thread },
      });
      expect(run.status).toBe(422);
      const removed = await alice("POST", `/v1/threads/${thread}/state/update`, {
        remove_message_ids: [id],
      });
      expect(removed.status).toBe(422);
      expect(removed.body.error.details[0].loc).toEqual(["body", "remove_message_ids", "0"]);
    }
    expect((await t.checkpointer.getCheckpoint(thread))?.version).toBe(versionBefore);
  });

  it("answers a valid token whose user id no store can hold with 401 INVALID_TOKEN", async () => {
    for (const userId of ["u".repeat(300), "nul\u0000user", "lone\ud800"]) {
      const call = caller(t.base, await sign({ user_id: userId }));
      const answer = await call("POST", "/v1/graph/invoke", {
        messages: [userMessage("hi")],
        config: { thread_id: `user-${label}` },
      });
      expect(answer.status, JSON.stringify(userId)).toBe(401);
      expect(answer.body.error.code).toBe("INVALID_TOKEN");
      expect((await call("GET", "/v1/threads")).status).toBe(401);
    }
    expect(await t.checkpointer.getCheckpoint(`user-${label}`)).toBeNull();
  });
});
