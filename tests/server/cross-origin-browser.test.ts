import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../inspector/support/browser.js";
import { caller, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

/**
 * What a page on another origin tries against a server started as `tenxgraph init` starts it
 * (no auth, no ORIGINS): run the agent (a simple text/plain POST, a preflighted JSON POST, a
 * WebSocket) and read the thread list. Each attempt's outcome is reported by the page.
 */
const ATTACK = `
<script>
window.results = (async (api) => {
  const out = {};
  const run = JSON.stringify({ messages: [{ role: "user", content: [{ type: "text", text: "charge 13" }] }],
    config: { thread_id: "from-evil" } });
  const attempt = async (name, work) => {
    try { out[name] = await work(); } catch (error) { out[name] = "blocked: " + error.name; }
  };
  await attempt("simplePost", async () => (await fetch(api + "/v1/graph/invoke",
    { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: run })).type);
  await attempt("jsonPost", async () => (await fetch(api + "/v1/graph/invoke",
    { method: "POST", headers: { "content-type": "application/json" }, body: run })).status);
  await attempt("readThreads", async () => (await (await fetch(api + "/v1/threads")).text()));
  out.socket = await new Promise((resolve) => {
    const ws = new WebSocket(api.replace("http", "ws") + "/v1/graph/ws");
    ws.onopen = () => { ws.send(run); resolve("open"); };
    ws.onerror = () => resolve("refused");
  });
  return out;
})(new URLSearchParams(location.search).get("api"));
</script>`;

describe("a page on another origin, in headless Chromium", () => {
  let t: TestServer;
  let evil: Server;
  let evilBase: string;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestServer("sqlite", "cross_origin_browser", { auth: null });
    const seeded = await caller(t.base)("POST", "/v1/graph/invoke", {
      messages: [userMessage("my secret order")],
      config: { thread_id: "private-thread" },
    });
    expect(seeded.status).toBe(200);
    evil = createServer((_req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end(ATTACK),
    );
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    evilBase = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => evil.close(resolve));
    await t.close();
  });

  it("can neither run the agent nor read the threads", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${evilBase}/?api=${encodeURIComponent(t.base)}`);
    const results = (await page.evaluate("window.results")) as Record<string, string>;
    // The no-cors POST goes out (the browser cannot stop it) but is refused by the server.
    expect(results.simplePost).toBe("opaque");
    expect(results.jsonPost).toBe("blocked: TypeError");
    expect(results.readThreads).toBe("blocked: TypeError");
    expect(results.socket).toBe("refused");
    // Nothing ran: the only thread is the owner's.
    const threads = (await t.checkpointer.listThreads()).map((thread) => thread.threadId);
    expect(threads).toEqual(["private-thread"]);
    expect(t.count(/charged order 13/)).toBe(0);
  });
});
