import { join } from "node:path";
// The SDK's 2.x line (2.0.0, which the registry marks deprecated; 1.x is its current line),
// installed beside 1.x under an alias: the same server serves both.
import { Client } from "langgraph-sdk-2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { TEST_JWT_SECRET, tokenFor } from "../support/http.js";
import { collect, human, scratchDir, type Loose } from "./lg-client.js";
import { writeLgProject } from "./lg-project.js";

const scratch = scratchDir("lg-sdk2-");

async function clientFor(apiUrl: string, user: string): Promise<Client> {
  return new Client({
    apiUrl,
    defaultHeaders: { Authorization: `Bearer ${await tokenFor(user)}` },
    callerOptions: { maxRetries: 0 },
  });
}

describe("@langchain/langgraph-sdk 2.x against tenxgraph api", () => {
  let cli: CliProcess;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    const dir = join(scratch, "main");
    writeLgProject(dir);
    cli = new CliProcess(["api", "--port", "0"], {
      cwd: dir,
      env: { JWT_SECRET_KEY: TEST_JWT_SECRET },
    });
    const url = await cli.url();
    alice = await clientFor(url, "alice");
    bob = await clientFor(url, "bob");
  });
  afterAll(async () => {
    await cli?.stop();
  });

  it("finds the assistant, runs a thread to the end and streams it", async () => {
    const [assistant] = await alice.assistants.search();
    expect(assistant).toMatchObject({ graph_id: "agent" });
    const thread = await alice.threads.create({ metadata: { topic: "v2" } });
    const values: Loose = await alice.runs.wait(thread.thread_id, assistant!.assistant_id, {
      input: human("hi"),
    });
    expect(values.messages.map((m: { type: string }) => m.type)).toEqual(["human", "ai"]);
    const events = await collect(
      alice.runs.stream(thread.thread_id, "agent", {
        input: human("hello"),
        streamMode: ["values", "updates", "messages-tuple"],
      }),
    );
    const tuples = events.filter((e) => e.event === "messages").map((e) => e.data);
    expect(tuples.map(([chunk]) => chunk.content).join("")).toBe("hello there friend");
    expect(events.filter((e) => e.event === "values").at(-1)!.data.messages).toHaveLength(4);
    expect((await alice.threads.getHistory(thread.thread_id)).length).toBeGreaterThan(2);
  });

  it("answers an interrupt with command.resume", async () => {
    const thread = await alice.threads.create();
    const paused: Loose = await alice.runs.wait(thread.thread_id, "agent", {
      input: human("approve?"),
    });
    expect(paused.__interrupt__[0].value).toEqual({ question: "refund 42 USD?" });
    const resumed: Loose = await alice.runs.wait(thread.thread_id, "agent", {
      command: { resume: { approved: true } },
    });
    expect(resumed.messages.at(-1).content).toBe('answer: {"approved":true}');
    expect((await alice.threads.getState(thread.thread_id)).next).toEqual([]);
  });

  it("keeps store items per user, and refuses another user's thread", async () => {
    await alice.store.putItem(["prefs"], "theme", { color: "blue" });
    expect((await alice.store.getItem(["prefs"], "theme"))?.value).toEqual({ color: "blue" });
    await expect(bob.store.getItem(["prefs"], "theme")).rejects.toMatchObject({ status: 404 });
    const thread = await alice.threads.create();
    await expect(bob.threads.get(thread.thread_id)).rejects.toMatchObject({ status: 403 });
    await expect(
      bob.runs.wait(thread.thread_id, "agent", { input: human("hi") }),
    ).rejects.toMatchObject({ status: 403 });
    // Only the version the create wrote: the refused run wrote nothing.
    expect((await alice.threads.getHistory(thread.thread_id)).length).toBe(1);
  });
});
