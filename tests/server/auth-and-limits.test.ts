import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caller, isErrorEnvelope, TEST_JWT_SECRET, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

const secret = new TextEncoder().encode(TEST_JWT_SECRET);
const sign = (claims: Record<string, unknown>) =>
  new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h").sign(secret);

describe("JWT auth (HS256), limits, CORS and request ids", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer("sqlite", "auth_limits", { app: { maxBodyBytes: 4096 } });
  });
  afterAll(() => t.close());

  it("answers 401 with the error envelope for a missing, malformed, forged or expired token", async () => {
    const cases: [string | undefined, string][] = [
      [undefined, "MISSING_TOKEN"],
      ["not-a-jwt", "INVALID_TOKEN"],
      [await tokenFor("alice", { secret: "another-secret" }), "INVALID_TOKEN"],
      [await tokenFor("alice", { expired: true }), "EXPIRED_TOKEN"],
      [await sign({ role: "admin" }), "INVALID_TOKEN"],
    ];
    for (const [token, code] of cases) {
      const r = await caller(t.base, token)("GET", "/v1/threads");
      expect(r.status, code).toBe(401);
      expect(isErrorEnvelope(r.body)).toBe(true);
      expect(r.body.error.code).toBe(code);
    }
    // A header without a token is a missing token; another scheme is not a bearer token.
    const byHeader: [string, string][] = [
      ["Bearer", "MISSING_TOKEN"],
      ["Bearer   ", "MISSING_TOKEN"],
      ["Basic YWxpY2U6c2VjcmV0", "INVALID_TOKEN"],
    ];
    for (const [authorization, code] of byHeader) {
      const r = await caller(t.base)("GET", "/v1/threads", undefined, { authorization });
      expect(r.status, authorization).toBe(401);
      expect(r.body.error.code, authorization).toBe(code);
    }
    expect((await caller(t.base)("GET", "/ping")).status).toBe(200);
  });

  it("takes the user from user_id, else sub", async () => {
    const bySub = caller(t.base, await sign({ sub: "carol" }));
    await bySub("POST", "/v1/graph/invoke", {
      messages: [userMessage("hi")],
      config: { thread_id: "by-sub" },
    });
    expect((await bySub("GET", "/v1/threads/by-sub")).body.data.thread_data.thread.user_id).toBe(
      "carol",
    );
    const both = caller(t.base, await sign({ sub: "someone", user_id: "dave" }));
    await both("POST", "/v1/graph/invoke", {
      messages: [userMessage("hi")],
      config: { thread_id: "by-user-id" },
    });
    expect((await both("GET", "/v1/threads/by-user-id")).body.data.thread_data.thread.user_id).toBe(
      "dave",
    );
  });

  it("refuses a body over the limit with 413, allows no other origin, keeps a sane request id", async () => {
    const call = caller(t.base, await tokenFor("alice"));
    const big = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("x".repeat(5000))],
    });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("REQUEST_TOO_LARGE");
    expect(isErrorEnvelope(big.body)).toBe(true);
    // Without content-length (a streamed, chunked body) the bytes are counted as they come.
    const token = await tokenFor("alice");
    const streamed = async (text: string) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(text));
          controller.close();
        },
      });
      const response = await fetch(`${t.base}/v1/graph/invoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit);
      return {
        status: response.status,
        body: (await response.json()) as { error?: { code: string } },
      };
    };
    const run = (content: string) => JSON.stringify({ messages: [userMessage(content)] });
    expect((await streamed(run("x".repeat(5000)))).body.error?.code).toBe("REQUEST_TOO_LARGE");
    expect((await streamed(run("small"))).status).toBe(200);

    const preflight = await fetch(`${t.base}/v1/threads/abc/messages`, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:5173",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    // No ORIGINS configured: no page on another origin is allowed (see cross-origin.test.ts).
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();

    const traced = await call("GET", "/ping", undefined, { "x-request-id": "trace-123" });
    expect(traced.headers.get("x-request-id")).toBe("trace-123");
    expect(traced.body.metadata.request_id).toBe("trace-123");
    const junk = await call("GET", "/ping", undefined, { "x-request-id": "bad id\twith tab" });
    expect(junk.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    const lost = await call("GET", "/v1/nowhere");
    expect(lost.status).toBe(404);
    expect(isErrorEnvelope(lost.body)).toBe(true);
    const notJson = await call("POST", "/v1/graph/invoke", "{not json");
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe("INVALID_JSON");
  });
});

describe("JWT auth with a JWKS URL (RS256), issuer, audience and a user claim", () => {
  let jwks: Server;
  let t: TestServer;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  beforeAll(async () => {
    const pair = await generateKeyPair("RS256");
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    jwks = createServer((_req, res) =>
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ keys: [jwk] })),
    );
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    t = await startTestServer("sqlite", "auth_jwks", {
      auth: {
        method: "jwt",
        jwks_url: url,
        issuer: "https://issuer.test",
        audience: "tenxgraph",
        user_claim: "email",
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => jwks.close(resolve));
  });

  const rs = (claims: Record<string, unknown>, audience = "tenxgraph") =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer("https://issuer.test")
      .setAudience(audience)
      .setExpirationTime("1h")
      .sign(privateKey);

  it("accepts a token signed by a JWKS key, with the user from the configured claim", async () => {
    const call = caller(t.base, await rs({ email: "erin@example.com", sub: "ignored" }));
    await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("hi")],
      config: { thread_id: "jwks" },
    });
    expect((await call("GET", "/v1/threads")).body.data.threads[0].user_id).toBe(
      "erin@example.com",
    );
  });

  it("refuses a wrong audience, an HS256 token and a forged RS256 one", async () => {
    const other = await generateKeyPair("RS256");
    const forged = await new SignJWT({ email: "erin@example.com" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer("https://issuer.test")
      .setAudience("tenxgraph")
      .setExpirationTime("1h")
      .sign(other.privateKey);
    for (const token of [
      await rs({ email: "e" }, "another-api"),
      await sign({ user_id: "x" }),
      forged,
    ]) {
      const r = await caller(t.base, token)("GET", "/v1/threads");
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("INVALID_TOKEN");
    }
  });
});

describe("custom auth", () => {
  let t: TestServer;
  beforeAll(async () => {
    const keys: Record<string, string> = { "key-a": "alice", "key-b": "bob" };
    t = await startTestServer("sqlite", "auth_custom", {
      auth: {
        method: "custom",
        authenticate: (request) => {
          const user = keys[request.headers.get("x-api-key") ?? ""];
          return user ? { id: user } : null;
        },
      },
    });
  });
  afterAll(() => t.close());

  it("uses the function's user, and 401 when it returns null", async () => {
    const alice = caller(t.base);
    const r = await alice(
      "POST",
      "/v1/graph/invoke",
      { messages: [userMessage("hi")], config: { thread_id: "c1" } },
      { "x-api-key": "key-a" },
    );
    expect(r.status).toBe(200);
    expect((await alice("GET", "/v1/threads/c1", undefined, { "x-api-key": "key-b" })).status).toBe(
      403,
    );
    const none = await alice("GET", "/v1/threads", undefined, { "x-api-key": "nope" });
    expect(none.status).toBe(401);
    expect(isErrorEnvelope(none.body)).toBe(true);
  });
});
