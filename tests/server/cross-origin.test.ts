import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caller, isErrorEnvelope, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

const EVIL = "http://evil.example";

/** How a WebSocket handshake from `origin` ends: "open" or the HTTP status refusing it. */
function handshake(base: string, origin: string): Promise<string> {
  const ws = new WebSocket(base.replace("http://", "ws://") + "/v1/graph/ws", { origin });
  return new Promise((resolve) => {
    ws.once("open", () => {
      ws.close();
      resolve("open");
    });
    ws.once("unexpected-response", (_req, res) => {
      resolve(String(res.statusCode));
      ws.terminate();
    });
    ws.once("error", () => resolve("error"));
  });
}

/**
 * Issue 27, item 5: a server started as `tenxgraph init` and the examples start it (no auth,
 * no ORIGINS) must give a page on another origin nothing: no CORS headers, no runs by form
 * posts or `text/plain` bodies, no WebSocket.
 */
describe("cross-origin requests to a server with no ORIGINS", () => {
  let t: TestServer;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    t = await startTestServer("sqlite", "cross_origin_default", { auth: null });
    call = caller(t.base);
    const seeded = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("secret plans")],
      config: { thread_id: "private" },
    });
    expect(seeded.status).toBe(200);
  });
  afterAll(() => t.close());

  it("answers another origin's preflight and reads without any Access-Control header", async () => {
    const preflight = await fetch(`${t.base}/v1/graph/invoke`, {
      method: "OPTIONS",
      headers: {
        origin: EVIL,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    const list = await fetch(`${t.base}/v1/threads`, { headers: { origin: EVIL } });
    expect(list.headers.get("access-control-allow-origin")).toBeNull();
    expect(list.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("refuses another origin's writes (403 ORIGIN_NOT_ALLOWED) and any non-JSON body (415), running nothing", async () => {
    const before = (await t.checkpointer.listThreads()).length;
    const body = JSON.stringify({
      messages: [userMessage("charge 5")],
      config: { thread_id: "x1" },
    });
    // What a page can send without a preflight: a "simple" request with a text/plain body.
    const simple = await fetch(`${t.base}/v1/graph/invoke`, {
      method: "POST",
      headers: { origin: EVIL, "content-type": "text/plain;charset=UTF-8" },
      body,
    });
    expect(simple.status).toBe(403);
    const simpleBody = (await simple.json()) as { error: { code: string } };
    expect(isErrorEnvelope(simpleBody)).toBe(true);
    expect(simpleBody.error.code).toBe("ORIGIN_NOT_ALLOWED");
    const form = await fetch(`${t.base}/v1/graph/invoke`, {
      method: "POST",
      headers: { origin: EVIL, "content-type": "application/x-www-form-urlencoded" },
      body: "a=b",
    });
    expect(form.status).toBe(403);
    // Same origin (or no browser at all), but not declared JSON: 415.
    for (const type of ["text/plain", "application/x-www-form-urlencoded", ""]) {
      const answer = await fetch(`${t.base}/v1/graph/invoke`, {
        method: "POST",
        headers: type ? { "content-type": type } : {},
        body: new Blob([body]),
      });
      expect(answer.status, type).toBe(415);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
        "UNSUPPORTED_MEDIA_TYPE",
      );
    }
    const declared = await fetch(`${t.base}/v1/graph/invoke`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", origin: t.base },
      body: JSON.stringify({ messages: [userMessage("hi")], config: { thread_id: "same-origin" } }),
    });
    expect(declared.status).toBe(200);
    expect((await t.checkpointer.listThreads()).length).toBe(before + 1);
    expect(await t.checkpointer.getCheckpoint("x1")).toBeNull();
  });

  it("refuses another origin's WebSocket handshake (403); its own origin and non-browsers connect", async () => {
    expect(await handshake(t.base, EVIL)).toBe("403");
    expect(await handshake(t.base, t.base)).toBe("open");
  });
});

describe("cross-origin requests with ORIGINS configured", () => {
  it("allows listed origins with credentials, and '*' only without credentials", async () => {
    const listed = await startTestServer("sqlite", "cross_origin_listed", {
      auth: null,
      app: { corsOrigins: ["http://app.example"] },
    });
    const any = await startTestServer("sqlite", "cross_origin_any", {
      auth: null,
      app: { corsOrigins: ["*"] },
    });
    try {
      const ask = (base: string, origin: string) =>
        fetch(`${base}/v1/threads`, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "GET",
            "access-control-request-headers": "authorization",
          },
        });
      const ok = await ask(listed.base, "http://app.example");
      expect(ok.headers.get("access-control-allow-origin")).toBe("http://app.example");
      expect(ok.headers.get("access-control-allow-credentials")).toBe("true");
      const other = await ask(listed.base, EVIL);
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
      const wild = await ask(any.base, EVIL);
      expect(wild.headers.get("access-control-allow-origin")).toBe("*");
      expect(wild.headers.get("access-control-allow-credentials")).toBeNull();
      expect(await handshake(listed.base, "http://app.example")).toBe("open");
      expect(await handshake(listed.base, EVIL)).toBe("403");
    } finally {
      await listed.close();
      await any.close();
    }
  });
});
