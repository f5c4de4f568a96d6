import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { human, scratchDir, type Loose } from "./lg-client.js";
import { writeLangGraphJsonProject } from "./lg-project.js";

const scratch = scratchDir("lg-auth-");

/** LangGraph's own `Auth` object, as a LangGraph project's auth.path exports it. */
const AUTH_MODULE = `
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
const users = { "alice-key": "alice", "bob-key": "bob" };
export const auth = new Auth().authenticate(async (request) => {
  const key = request.headers.get("x-api-key");
  const identity = key ? users[key] : undefined;
  if (!identity) throw new HTTPException(401, { message: "Invalid API key" });
  return { identity, permissions: [] };
});
`;

/** The project of langgraph-sdk.int.test.ts with `auth.path` added to its langgraph.json. */
function writeProject(dir: string, authModule: string): void {
  writeLangGraphJsonProject(dir);
  writeFileSync(join(dir, "auth.mjs"), authModule);
  const config = JSON.parse(readFileSync(join(dir, "langgraph.json"), "utf8")) as Loose;
  config.auth = { path: "./auth.mjs:auth" };
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify(config));
}

const clientWithKey = (apiUrl: string, key?: string) =>
  new Client({
    apiUrl,
    defaultHeaders: key ? { "x-api-key": key } : {},
    callerOptions: { maxRetries: 0 },
  });

describe("a langgraph.json whose auth.path exports LangGraph's Auth object", () => {
  let cli: CliProcess;
  let url: string;

  beforeAll(async () => {
    const dir = join(scratch, "auth");
    writeProject(dir, AUTH_MODULE);
    cli = new CliProcess(["api", "--port", "0"], { cwd: dir });
    url = await cli.url();
  });
  afterAll(async () => {
    await cli?.stop();
  });

  it("authenticates with it, and each identity owns its threads", async () => {
    const alice = clientWithKey(url, "alice-key");
    const bob = clientWithKey(url, "bob-key");
    const thread = await alice.threads.create();
    const values: Loose = await alice.runs.wait(thread.thread_id, "agent", { input: human("hi") });
    expect(values.messages.at(-1).content).toBe("hello there friend");
    await expect(bob.threads.get(thread.thread_id)).rejects.toMatchObject({ status: 403 });
    expect((await bob.threads.search()).map((t) => t.thread_id)).not.toContain(thread.thread_id);
  });

  it("answers the HTTPException its authenticate() throws, and writes nothing", async () => {
    for (const key of [undefined, "mallory-key"]) {
      const refused = await clientWithKey(url, key)
        .threads.create()
        .catch((e: Loose) => e);
      expect(refused, String(key)).toMatchObject({ status: 401 });
      expect(String(refused.message)).toMatch(/Invalid API key/);
    }
    const threads = await clientWithKey(url, "alice-key").threads.search();
    expect(threads.length).toBe(1);
  });
});

describe("errors raised before a LangGraph route's handler", () => {
  let cli: CliProcess;
  let url: string;
  beforeAll(async () => {
    const dir = join(scratch, "shapes");
    writeProject(dir, AUTH_MODULE);
    // A small body limit, so the oversized body below needs no large upload.
    cli = new CliProcess(["api", "--port", "0"], { cwd: dir, env: { MAX_REQUEST_SIZE: "4096" } });
    url = await cli.url();
  });
  afterAll(async () => {
    await cli?.stop();
  });
  const post = (path: string, body: string, key?: string) =>
    fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { "x-api-key": key } : {}) },
      body,
    });

  it("answer in LangGraph's shape on its paths, in the envelope on /v1, and write nothing", async () => {
    const noKey = await post("/threads", "{}");
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ detail: "Invalid API key", code: "INVALID_TOKEN" });
    const huge = await post(
      "/threads",
      JSON.stringify({ metadata: { x: "y".repeat(10_000) } }),
      "alice-key",
    );
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ code: "REQUEST_TOO_LARGE" });
    const deep = await post(
      "/threads",
      `{"metadata":${"[".repeat(2000)}${"]".repeat(2000)}}`,
      "alice-key",
    );
    expect(deep.status).toBe(422);
    expect(((await deep.json()) as Loose).detail).toMatch(/levels deep/);
    const unknown = await post("/threads/search/nothing-here", "{}", "alice-key");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toHaveProperty("detail");
    const v1 = await post("/v1/graph/invoke", "{}");
    expect(v1.status).toBe(401);
    expect(await v1.json()).toMatchObject({ error: { code: "INVALID_TOKEN" } });
    expect(await clientWithKey(url, "alice-key").threads.search()).toEqual([]);
  });
});

describe("a LangGraph Auth object with authorization handlers", () => {
  it("is refused at start-up, naming the handlers, rather than served without them", async () => {
    const dir = join(scratch, "auth-on");
    writeProject(
      dir,
      `${AUTH_MODULE}\nauth.on("threads", ({ value }) => { value.metadata ??= {}; return {}; });\n`,
    );
    const cli = new CliProcess(["api", "--port", "0"], { cwd: dir });
    expect(await cli.exited).not.toBe(0);
    expect(cli.output).toMatch(/authorization handlers \(\.on\("threads"\)\)/);
  });
});
