import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { InMemoryCheckpointer } from "@tenxgraph/core";
import { createApp } from "@tenxgraph/server";
import { describe, expect, it } from "vitest";
import { TEST_JWT_SECRET, tokenFor } from "./support/http.js";
import { buildTestGraph } from "./support/test-graph.js";

/** The built inspector's files (the int setup builds the packages first). */
const BUILT = fileURLToPath(new URL("../../packages/server/dist/inspector/", import.meta.url));

function app(inspector?: boolean, traceUrl?: string) {
  const graph = buildTestGraph({ effectLog: "/dev/null" }, new InMemoryCheckpointer());
  return createApp({
    graph,
    auth: { method: "jwt", secret: TEST_JWT_SECRET },
    ...(inspector === undefined ? {} : { inspector }),
    ...(traceUrl === undefined ? {} : { traceUrl }),
  });
}

describe("the inspector's route", () => {
  it("serves the page and its assets without a token, while the data behind it wants one", async () => {
    const server = app();
    const page = await server.request("/inspector/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    const html = await page.text();
    const script = /src="(\/inspector\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await server.request(script!);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(asset.headers.get("cache-control")).toContain("immutable");
    // Everything the page is made of is on the server: no address outside it is loaded, and
    // the browser is told to load none.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");

    expect((await server.request("/v1/threads")).status).toBe(401);
    const token = await tokenFor("alice");
    const threads = await server.request("/v1/threads", {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(threads.status).toBe(200);
  });

  it("answers the page for its own routes, redirects the bare path, and never leaves its folder", async () => {
    const server = app();
    const deep = await server.request("/inspector/threads/order-9");
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<div id="app"></div>');
    const bare = await server.request("/inspector");
    expect(bare.status).toBe(302);
    expect(bare.headers.get("location")).toBe("/inspector/");
    // Climbing out of the folder gets the page (or, once the URL's dots are resolved, a path
    // outside /inspector), never the package's own files.
    const malformed = await server.request("/inspector/threads/%E0%A4%A");
    expect(malformed.status).toBe(200);
    for (const path of ["/inspector/..%2f..%2fpackage.json", "/inspector/%2e%2e/index.js"]) {
      const text = await (await server.request(path)).text();
      expect(text, path).not.toContain("@tenxgraph/server");
      expect(text, path).not.toContain("createApp");
    }
    expect(await (await server.request("/inspector/..%2f..%2fpackage.json")).text()).toContain(
      '<div id="app"></div>',
    );
    expect(readdirSync(BUILT)).toContain("index.html");
  });

  it("tells the page where trace ids link (settings.json, no token), and refuses a template that cannot link", async () => {
    const linked = await app(undefined, "https://jaeger.local/trace/{traceId}").request(
      "/inspector/settings.json",
    );
    expect(linked.status).toBe(200);
    expect(await linked.json()).toEqual({ trace_url: "https://jaeger.local/trace/{traceId}" });
    const plain = await app().request("/inspector/settings.json");
    expect(await plain.json()).toEqual({ trace_url: null });
    for (const bad of [
      "https://jaeger.local/trace/",
      "javascript:{traceId}",
      "not a url {traceId}",
    ])
      expect(() => app(undefined, bad), bad).toThrow(/traceUrl must be an http\(s\) URL/);
  });

  it("is not there with inspector: false", async () => {
    const r = await app(false).request("/inspector/");
    expect(r.status).toBe(404);
    expect(await r.text()).not.toContain('<div id="app"></div>');
  });
});
