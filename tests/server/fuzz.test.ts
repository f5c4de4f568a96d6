import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caller, isErrorEnvelope, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

const TARGET = "fuzz-target";
const T = `/v1/threads/${TARGET}`;
const ROLES = ["user", "assistant", "system", "tool"];

/** Any JSON value but a non-empty array of well-formed messages. */
const badMessages = fc.oneof(
  fc.constant([]),
  fc.jsonValue().filter((v) => !Array.isArray(v)),
  fc.array(
    fc.oneof(
      fc.jsonValue().filter((v) => typeof v !== "object" || v === null || Array.isArray(v)),
      fc.record({ role: fc.string().filter((r) => !ROLES.includes(r)), content: fc.jsonValue() }),
      fc.record({
        role: fc.constantFrom(...ROLES),
        content: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null)),
      }),
    ),
    { minLength: 1, maxLength: 3 },
  ),
);
const notString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.array(fc.jsonValue(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
);
const notObject = fc.oneof(
  fc.integer(),
  fc.string(),
  fc.boolean(),
  fc.array(fc.jsonValue(), { maxLength: 2 }),
);
const notPositiveInt = fc.oneof(
  fc.integer({ max: 0 }),
  fc.double({ noInteger: true }),
  fc.string(),
  fc.boolean(),
);

/** [method, path, invalid-body field(s)]: each body breaks the route's schema by construction. */
const BODY_ROUTES: [string, string, fc.Arbitrary<Record<string, unknown>>][] = [
  [
    "POST",
    "/v1/graph/invoke",
    badMessages.map((messages) => ({ messages, config: { thread_id: TARGET } })),
  ],
  [
    "POST",
    "/v1/graph/stream",
    badMessages.map((messages) => ({ messages, config: { thread_id: TARGET } })),
  ],
  [
    "POST",
    "/v1/graph/invoke",
    notPositiveInt.map((r) => ({
      messages: [userMessage("hi")],
      recursion_limit: r,
      config: { thread_id: TARGET },
    })),
  ],
  [
    "POST",
    "/v1/graph/invoke",
    notObject.map((config) => ({ messages: [userMessage("hi")], config })),
  ],
  [
    "POST",
    "/v1/graph/stop",
    fc.oneof(notString, fc.constantFrom("", "  ")).map((id) => ({ thread_id: id })),
  ],
  ["PUT", `${T}/state`, notObject.map((state) => ({ config: {}, state }))],
  [
    "PUT",
    `${T}/state`,
    badMessages
      .filter((m) => Array.isArray(m) && m.length > 0)
      .map((context) => ({ state: { context } })),
  ],
  ["POST", `${T}/messages`, badMessages.map((messages) => ({ config: {}, messages }))],
  [
    "POST",
    `${T}/in-doubt/some-key`,
    fc
      .string()
      .filter((a) => !["retry", "fail", "complete"].includes(a))
      .map((action) => ({ action })),
  ],
  ["DELETE", T, notObject.map((config) => ({ config }))],
  [
    "POST",
    "/v1/store/memories",
    fc.oneof(notString, fc.constant("")).map((content) => ({ content })),
  ],
  [
    "POST",
    "/v1/store/search",
    fc.oneof(notString, fc.constantFrom("", "   ")).map((query) => ({ query })),
  ],
  ["POST", "/v1/store/memories/list", notPositiveInt.map((limit) => ({ limit }))],
  ["POST", "/v1/store/memories/forget", notString.map((memory_type) => ({ memory_type }))],
  ["PUT", "/v1/store/memories/some-id", notString.map((content) => ({ content }))],
];

/** Text that is not JSON (and not blank, which reads as `{}`). */
const notJson = fc.string({ minLength: 1 }).filter((s) => {
  if (s.trim() === "") return false;
  try {
    JSON.parse(s);
    return false;
  } catch {
    return true;
  }
});

describe("fuzzed bodies and paths", () => {
  let t: TestServer;
  let call: ReturnType<typeof caller>;
  let before: unknown;
  const state = async () => ({
    checkpoint: await t.checkpointer.getCheckpoint(TARGET),
    messages: await t.checkpointer.listMessages(TARGET),
    ledger: await t.checkpointer.listCalls(TARGET),
    threads: await t.checkpointer.listThreads(),
  });
  beforeAll(async () => {
    t = await startTestServer("sqlite", "fuzz");
    call = caller(t.base, await tokenFor("alice"));
    expect(
      (
        await call("POST", "/v1/graph/invoke", {
          messages: [userMessage("charge order 5")],
          config: { thread_id: TARGET },
        })
      ).status,
    ).toBe(200);
    before = await state();
  });
  afterAll(() => t.close());

  /** 4xx with the error envelope: never a 2xx, never a 5xx. */
  function expectRefused(r: { status: number; body: unknown }, what: string) {
    expect(r.status, what).toBeGreaterThanOrEqual(400);
    expect(r.status, what).toBeLessThan(500);
    expect(isErrorEnvelope(r.body), what).toBe(true);
  }

  it("answers every malformed body with a 4xx error envelope and changes no thread", async () => {
    const extra = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 });
    const request = fc.oneof(
      ...BODY_ROUTES.map(([method, path, body]) =>
        fc.tuple(
          fc.constant(method),
          fc.constant(path),
          fc.tuple(extra, body).map(([e, b]) => ({ ...e, ...b })),
        ),
      ),
      fc
        .tuple(fc.constantFrom(...BODY_ROUTES.map(([m, p]) => `${m} ${p}`)), notJson)
        .map(([route, text]) => {
          const [method, path] = route.split(" ") as [string, string];
          return [method, path, text] as [string, string, unknown];
        }),
    );
    await fc.assert(
      fc.asyncProperty(request, async ([method, path, body]) => {
        const r = await call(method, path, body);
        expectRefused(r, `${method} ${path} ${JSON.stringify(body)}`);
      }),
      { numRuns: 300 },
    );
    expect(await state()).toEqual(before);
    expect(t.count(/charged order/)).toBe(1);
  });

  it("answers unknown paths, methods and ids with a 4xx error envelope and changes no thread", async () => {
    const segment = fc
      .webSegment()
      .filter((s) => s !== "" && !["state", "messages", "ledger", "in-doubt"].includes(s));
    const path = fc.oneof(
      fc
        .tuple(segment, fc.array(fc.webSegment(), { maxLength: 2 }))
        .map(([s, more]) => [T, s, ...more].join("/")),
      segment
        .filter((s) => !["graph", "threads", "store", "files", "config"].includes(s))
        .map((s) => `/v1/${s}`),
      segment
        .filter((s) => !["invoke", "stream", "stop", "setup", "tools"].includes(s))
        .map((s) => `/v1/graph/${s}`),
      fc
        .string({ minLength: 513, maxLength: 600 })
        .map((id) => `/v1/threads/${encodeURIComponent(id)}/state`),
    );
    const method = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH");
    await fc.assert(
      fc.asyncProperty(method, path, fc.jsonValue(), async (m, p, body) => {
        const r = await call(m, p, m === "GET" ? undefined : body);
        expectRefused(r, `${m} ${p}`);
      }),
      { numRuns: 300 },
    );
    expect(await state()).toEqual(before);
  });
});
