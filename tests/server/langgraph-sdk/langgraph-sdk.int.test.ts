import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { TEST_JWT_SECRET, tokenFor } from "../support/http.js";
import { clientFor, collect, human, scratchDir, storeFor, type Loose } from "./lg-client.js";
import { writeLangGraphJsonProject, writeLgProject } from "./lg-project.js";
import { dropStore } from "../../support/fresh-store.js";
import { STORE_KINDS, type StoreSpec } from "../../support/store-spec.js";

const scratch = scratchDir("lg-sdk-");

describe.each(STORE_KINDS)("@langchain/langgraph-sdk against tenxgraph api on %s", (kind) => {
  const dir = join(scratch, `main-${kind}`);
  let store: StoreSpec;
  let cli: CliProcess;
  let alice: Client;
  let bob: Client;
  let assistantId: string;

  beforeAll(async () => {
    store = storeFor(kind, "lg_sdk_main", dir);
    writeLgProject(dir, store);
    cli = new CliProcess(["api", "--port", "0"], {
      cwd: dir,
      env: { JWT_SECRET_KEY: TEST_JWT_SECRET, PRIVILEGED_STATE_EDITS: "true" },
    });
    const url = await cli.url();
    alice = await clientFor(url, "alice");
    bob = await clientFor(url, "bob");
  });
  afterAll(async () => {
    await cli?.stop();
    if (store) await dropStore(store);
  });

  it("lists the graph as one assistant with a stable id, its graph and schemas", async () => {
    const assistants = await alice.assistants.search();
    expect(assistants).toHaveLength(1);
    expect(assistants[0]).toMatchObject({ graph_id: "agent", name: "agent" });
    assistantId = assistants[0]!.assistant_id;
    // LangGraph's own id for graph "agent" (uuid5 in its graph namespace).
    expect(assistantId).toBe("fe096781-5601-53d2-b2f6-0d3403f7e9ca");
    expect((await alice.assistants.get(assistantId)).graph_id).toBe("agent");
    const graph = await alice.assistants.getGraph(assistantId);
    expect(graph.nodes.map((n) => n.id)).toEqual(["__start__", "MAIN", "TOOL", "__end__"]);
    expect((await alice.assistants.getSchemas("agent")).graph_id).toBe("agent");
    await expect(alice.assistants.get("no-such-graph")).rejects.toMatchObject({ status: 404 });
  });

  it("creates, reads, updates and searches threads", async () => {
    const thread = await alice.threads.create({ metadata: { topic: "greeting" } });
    expect(thread).toMatchObject({ status: "idle", metadata: { topic: "greeting" } });
    expect((await alice.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
    const updated = await alice.threads.update(thread.thread_id, { metadata: { mood: "good" } });
    expect(updated.metadata).toMatchObject({ topic: "greeting", mood: "good" });
    const found = await alice.threads.search({ metadata: { mood: "good" } });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    await expect(alice.threads.create({ threadId: thread.thread_id })).rejects.toMatchObject({
      status: 409,
    });
    expect(
      (await alice.threads.create({ threadId: thread.thread_id, ifExists: "do_nothing" }))
        .thread_id,
    ).toBe(thread.thread_id);
  });

  it("runs.wait answers the final values with LangChain messages", async () => {
    const thread = await alice.threads.create();
    const values: Loose = await alice.runs.wait(thread.thread_id, assistantId, {
      input: human("hi"),
    });
    expect(values.messages.map((m: { type: string }) => m.type)).toEqual(["human", "ai"]);
    expect(values.messages[1]).toMatchObject({ content: "hello there friend", tool_calls: [] });
    expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("runs.stream in values, updates, messages-tuple, messages and custom modes", async () => {
    const thread = await alice.threads.create();
    const events = await collect(
      alice.runs.stream(thread.thread_id, assistantId, {
        input: human("hello"),
        streamMode: ["values", "updates", "messages-tuple", "custom"],
      }),
    );
    expect(events[0]).toMatchObject({ event: "metadata", data: { attempt: 1 } });
    expect(events[0]!.data.run_id).toMatch(/^[0-9a-f-]{36}$/);
    const names = events.map((e) => e.event);
    expect(names).toContain("values");
    expect(names).toContain("custom");
    const last = events.filter((e) => e.event === "values").at(-1)!.data;
    expect(last.messages.map((m: { type: string }) => m.type)).toEqual(["human", "ai"]);
    const update = events.find((e) => e.event === "updates")!.data;
    expect(update.MAIN.messages[0]).toMatchObject({ type: "ai", content: "hello there friend" });
    const tuples = events.filter((e) => e.event === "messages").map((e) => e.data);
    expect(tuples.map(([chunk]) => chunk.content).join("")).toBe("hello there friend");
    expect(tuples[0][1]).toMatchObject({ langgraph_node: "MAIN" });
    expect(events.find((e) => e.event === "custom")!.data).toEqual({ progress: 1 });

    const legacy = await collect(
      alice.runs.stream(thread.thread_id, assistantId, {
        input: human("again"),
        streamMode: "messages",
      }),
    );
    const partials = legacy.filter((e) => e.event === "messages/partial");
    expect(partials.at(-1)!.data[0].content).toBe("hello there friend");
    expect(legacy.some((e) => e.event === "messages/metadata")).toBe(true);
    expect(legacy.find((e) => e.event === "messages/complete")!.data[0].type).toBe("ai");
  });

  it("surfaces an interrupt as __interrupt__ and resumes it with command.resume", async () => {
    const thread = await alice.threads.create();
    const paused: Loose = await alice.runs.wait(thread.thread_id, assistantId, {
      input: human("approve?"),
    });
    expect(paused.__interrupt__).toHaveLength(1);
    expect(paused.__interrupt__[0].value).toEqual({ question: "refund 42 USD?" });
    const state = await alice.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["MAIN"]);
    expect(state.tasks[0]!.interrupts[0]!.id).toBe(paused.__interrupt__[0].id);
    expect((await alice.threads.get(thread.thread_id)).status).toBe("interrupted");

    const events = await collect(
      alice.runs.stream(thread.thread_id, assistantId, {
        command: { resume: { approved: true } },
        streamMode: "updates",
      }),
    );
    const updates = events.filter((e) => e.event === "updates").map((e) => e.data);
    expect(updates.at(-1).MAIN.messages[0].content).toBe('answer: {"approved":true}');
    expect((await alice.threads.getState(thread.thread_id)).next).toEqual([]);
  });

  it("streams an interrupt in updates and values modes", async () => {
    const thread = await alice.threads.create();
    const events = await collect(
      alice.runs.stream(thread.thread_id, assistantId, {
        input: human("approve it"),
        streamMode: ["updates", "values"],
      }),
    );
    const interrupts = events.filter((e) => e.data?.__interrupt__);
    expect(interrupts.map((e) => e.event)).toEqual(["updates", "values"]);
  });

  it("pauses at interrupt_before and interrupt_after, and goes on with a null input", async () => {
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, assistantId, {
      input: human("hi"),
      interruptBefore: ["MAIN"],
    });
    const before = await alice.threads.getState(thread.thread_id);
    expect(before.next).toEqual(["MAIN"]);
    expect((before.values as Loose).messages.map((m: Loose) => m.type)).toEqual(["human"]);
    expect((await alice.threads.get(thread.thread_id)).status).toBe("interrupted");
    const done: Loose = await alice.runs.wait(thread.thread_id, assistantId, { input: null });
    expect(done.messages.map((m: { type: string }) => m.type)).toEqual(["human", "ai"]);

    const after = await alice.threads.create();
    await alice.runs.wait(after.thread_id, assistantId, {
      input: human("refund"),
      interruptAfter: ["MAIN"],
    });
    // Paused after the model asked for the charge, before the tool node ran (nothing charged).
    const paused = await alice.threads.getState(after.thread_id);
    expect(paused.next).toEqual(["TOOL"]);
    const types = (paused.values as Loose).messages.map((m: Loose) => m.type);
    expect(types).toEqual(["human", "ai"]);
    expect((await alice.threads.get(after.thread_id)).status).toBe("interrupted");
  });

  it("streams tasks, checkpoints and debug as LangGraph does, messages LangChain's", async () => {
    const thread = await alice.threads.create();
    const events = await collect(
      alice.runs.stream(thread.thread_id, assistantId, {
        input: human("hello"),
        streamMode: ["tasks", "checkpoints", "debug"],
      }),
    );
    const tasks = events.filter((e) => e.event === "tasks").map((e) => e.data);
    const start = tasks.find((t) => "input" in t && t.name === "MAIN");
    expect(start).toMatchObject({ id: expect.any(String), triggers: expect.any(Array) });
    expect(start.input.messages.map((m: Loose) => m.type)).toEqual(["human"]);
    const result = tasks.find((t) => "result" in t && t.id === start.id);
    expect(result).toMatchObject({ name: "MAIN", interrupts: [], error: null });
    const written = Object.fromEntries(result.result);
    expect(written.messages[0]).toMatchObject({ type: "ai", content: "hello there friend" });
    const checkpoints = events.filter((e) => e.event === "checkpoints").map((e) => e.data);
    expect(checkpoints.length).toBeGreaterThanOrEqual(2);
    const last = checkpoints.at(-1);
    expect(last.next).toEqual([]);
    expect(last.values.messages.map((m: Loose) => m.type)).toEqual(["human", "ai"]);
    const state = await alice.threads.getState(thread.thread_id);
    expect(last.config.configurable.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    expect(last.parent_config.configurable.checkpoint_id).toBe(
      state.parent_checkpoint!.checkpoint_id,
    );
    // debug: the same checkpoints and tasks, each with its type, step and time.
    const debug = events.filter((e) => e.event === "debug").map((e) => e.data);
    expect(debug.map((d) => d.type)).toEqual(expect.arrayContaining(["checkpoint", "task"]));
    expect(debug.filter((d) => d.type === "checkpoint").map((d) => d.payload)).toEqual(checkpoints);
    const taskResult = debug.find((d) => d.type === "task_result" && d.payload.id === start.id);
    expect(taskResult).toMatchObject({ step: expect.any(Number), timestamp: expect.any(String) });
    expect(taskResult.payload).toEqual(result);
  });

  it("answers a failed runs.wait as LangGraph does: 200 with __error__", async () => {
    const thread = await alice.threads.create();
    await expect(
      alice.runs.wait(thread.thread_id, assistantId, { input: human("fail now") }),
    ).rejects.toThrow("Error: the bank is down");
    // Without raiseError the SDK hands the 200 body back as it came.
    const answer: Loose = await alice.runs.wait(thread.thread_id, assistantId, {
      input: human("fail again"),
      raiseError: false,
    });
    expect(answer).toEqual({ __error__: { error: "Error", message: "the bank is down" } });
    expect((await alice.threads.get(thread.thread_id)).status).toBe("error");
  });

  it("multitask_strategy rollback stops the running run and forks from before it", async () => {
    const thread = await alice.threads.create();
    const slow = collect(
      alice.runs.stream(thread.thread_id, assistantId, { input: human("slow") }),
    );
    while ((await alice.threads.get(thread.thread_id)).status !== "busy") await sleep(50);
    const values: Loose = await alice.runs.wait(thread.thread_id, assistantId, {
      input: human("hi"),
      multitaskStrategy: "rollback",
    });
    // The stopped run's input is gone from the state; its versions stay in the history.
    expect(values.messages.map((m: Loose) => m.content)).toEqual(["hi", "hello there friend"]);
    await slow;
    const history = await alice.threads.getHistory(thread.thread_id, { limit: 50 });
    const texts = history.map((h) => (h.values as Loose).messages?.map((m: Loose) => m.content));
    expect(texts.some((t) => t?.[0] === "slow")).toBe(true);
  });

  it("multitask_strategy interrupt stops the running run and runs", async () => {
    const thread = await alice.threads.create();
    const slow = collect(
      alice.runs.stream(thread.thread_id, assistantId, { input: human("slow") }),
    );
    while ((await alice.threads.get(thread.thread_id)).status !== "busy") await sleep(50);
    const values: Loose = await alice.runs.wait(thread.thread_id, assistantId, {
      input: human("hi"),
      multitaskStrategy: "interrupt",
    });
    expect(values.messages.map((m: Loose) => m.content)).toEqual([
      "slow",
      "hi",
      "hello there friend",
    ]);
    await slow;
    expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("maps tool calls with args objects and tool_call_id, their ledger state in metadata", async () => {
    const thread = await alice.threads.create();
    const values: Loose = await alice.runs.wait(thread.thread_id, assistantId, {
      input: human("refund please"),
    });
    const [, call, result, done] = values.messages;
    expect(call.tool_calls).toEqual([
      { id: "call_1", name: "charge_card", args: { order_id: "5" }, type: "tool_call" },
    ]);
    expect(result).toMatchObject({ type: "tool", tool_call_id: "call_1", status: "success" });
    expect(done.content).toBe("done: Charged 42 USD for order 5");
    const state: Loose = await alice.threads.getState(thread.thread_id);
    const tool = state.values.messages[2];
    expect(tool.response_metadata.tenxgraph).toMatchObject({
      ledger_key: `${call.id}:call_1`,
      ledger_status: "completed",
      attempt: 1,
      in_doubt: false,
    });
    expect(readFileSync(join(dir, "charges.log"), "utf8")).toBe("charged 5\n");
  });

  it("copies a thread with its ledger: a run on the copy replays the charge", async () => {
    const charges = () => readFileSync(join(dir, "charges.log"), "utf8").split("\n").length;
    const thread = await alice.threads.create({ metadata: { topic: "refund" } });
    await alice.runs.wait(thread.thread_id, assistantId, { input: human("refund please") });
    const charged = charges();

    const copy = await alice.threads.copy(thread.thread_id);
    expect(copy.thread_id).not.toBe(thread.thread_id);
    expect(copy).toMatchObject({ status: "idle", metadata: { topic: "refund" } });
    const history = await alice.threads.getHistory(copy.thread_id);
    const ids = (h: typeof history) => h.map((s) => s.checkpoint.checkpoint_id);
    expect(ids(history)).toEqual(ids(await alice.threads.getHistory(thread.thread_id)));
    // Run the copy again from the checkpoint that asked for the charge: its tool node runs.
    const asked = history.find((s) => s.next.includes("TOOL"))!;
    const values: Loose = await alice.runs.wait(copy.thread_id, assistantId, {
      input: null,
      checkpointId: asked.checkpoint.checkpoint_id!,
    });
    expect(values.messages.at(-1).content).toBe("done: Charged 42 USD for order 5");
    expect(charges(), "the card was charged once in all").toBe(charged);
    expect((await alice.threads.getState(thread.thread_id)).values).toMatchObject({
      messages: { length: 4 },
    });

    await expect(bob.threads.copy(thread.thread_id)).rejects.toMatchObject({ status: 403 });
    await expect(alice.threads.copy("no-such-thread")).rejects.toMatchObject({ status: 404 });
    // Ids of a subgraph child's shape, and an id no store could hold: refused, nothing copied.
    const childShaped = await alice.threads
      .copy(`${thread.thread_id}|WORKER@0`)
      .catch((e: Loose) => e);
    expect([404, 409, 422]).toContain(childShaped.status);
    const huge = await alice.threads.copy("t".repeat(10_000)).catch((e: Loose) => e);
    expect([404, 422]).toContain(huge.status);
    const mine = await alice.threads.search({ metadata: { topic: "refund" } });
    expect(mine.map((t) => t.thread_id).sort()).toEqual([thread.thread_id, copy.thread_id].sort());
  });

  it("streams LangChain's callback events: graph, nodes, model tokens and tool calls", async () => {
    const thread = await alice.threads.create();
    const stream = await collect(
      alice.runs.stream(thread.thread_id, assistantId, {
        input: human("refund please"),
        streamMode: "events",
      }),
    );
    const runId = stream[0]!.data.run_id;
    const events = stream.filter((e) => e.event === "events").map((e) => e.data);
    const named = events.map((e: Loose) => `${e.event} ${e.name}`);
    expect(named[0]).toBe("on_chain_start LangGraph");
    expect(named.at(-1)).toBe("on_chain_end LangGraph");
    expect(events[0]).toMatchObject({
      run_id: runId,
      parent_ids: [],
      data: { input: human("refund please") },
    });
    const nodes = named.filter((n) => /^on_chain_(start|end) (MAIN|TOOL)$/.test(n));
    expect(nodes).toEqual([
      "on_chain_start MAIN",
      "on_chain_end MAIN",
      "on_chain_start TOOL",
      "on_chain_end TOOL",
      "on_chain_start MAIN",
      "on_chain_end MAIN",
    ]);
    const mainStart = events.find((e: Loose) => e.event === "on_chain_start" && e.name === "MAIN");
    // The engine's step, as the messages modes' metadata carries it.
    const step = mainStart.metadata.langgraph_step;
    expect(mainStart).toMatchObject({
      tags: [`graph:step:${step}`],
      parent_ids: [runId],
      metadata: { langgraph_node: "MAIN", thread_id: thread.thread_id },
    });
    const toolStep = nodeStart(events, "TOOL").metadata.langgraph_step;
    expect(toolStep).toBe(step + 1);
    const tokens = events.filter((e: Loose) => e.event === "on_chat_model_stream");
    expect(tokens.map((e: Loose) => e.data.chunk.content).join("")).toBe(
      "done: Charged 42 USD for order 5",
    );
    expect(tokens[0].data.chunk).toMatchObject({ type: "AIMessageChunk", tool_calls: [] });
    const model = named.filter((n) => n.startsWith("on_chat_model_"));
    expect(model[0]).toBe("on_chat_model_start chat_model");
    expect(model.at(-1)).toBe("on_chat_model_end chat_model");
    const end = events.find((e: Loose) => e.event === "on_chat_model_end");
    expect(end.data.output).toMatchObject({
      type: "ai",
      content: "done: Charged 42 USD for order 5",
    });
    expect(end.run_id).toBe(tokens[0].run_id);
    const toolStart = events.find((e: Loose) => e.event === "on_tool_start");
    const toolEnd = events.find((e: Loose) => e.event === "on_tool_end");
    expect(toolStart).toMatchObject({ name: "charge_card", data: { input: { order_id: "5" } } });
    expect(toolStart.metadata).toMatchObject({ langgraph_node: "TOOL", tool_call_id: "call_1" });
    expect(toolEnd).toMatchObject({
      name: "charge_card",
      run_id: toolStart.run_id,
      data: {
        input: { order_id: "5" },
        output: { type: "tool", tool_call_id: "call_1", content: "Charged 42 USD for order 5" },
      },
      metadata: { tenxgraph: { replayed: false, in_doubt: null } },
    });
    expect(toolEnd.metadata.tenxgraph.ledger_key).toMatch(/:call_1$/);
    expect(toolEnd.parent_ids).toEqual([runId, nodeStart(events, "TOOL").run_id]);
    expect(named.indexOf("on_tool_end charge_card")).toBeLessThan(
      named.indexOf("on_chain_end TOOL"),
    );
    const output = events.at(-1).data.output;
    expect(output.messages.map((m: Loose) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
  });

  it("reads history and past checkpoints, and updates state as a node", async () => {
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, assistantId, { input: human("hi") });
    const history = await alice.threads.getHistory(thread.thread_id);
    expect(history.length).toBeGreaterThanOrEqual(3);
    const versions = history.map((h) => Number(h.checkpoint.checkpoint_id));
    expect(versions).toEqual([...versions].sort((a, b) => b - a));
    expect((history[0]!.values as Loose).messages).toHaveLength(2);
    const first = history.at(-1)!;
    const past = await alice.threads.getState(thread.thread_id, first.checkpoint.checkpoint_id!);
    expect(past.checkpoint.checkpoint_id).toBe(first.checkpoint.checkpoint_id);

    const edited = await alice.threads.updateState(thread.thread_id, {
      values: { messages: [{ type: "human", content: "hello again" }] },
      asNode: "TOOL",
    });
    const state: Loose = await alice.threads.getState(thread.thread_id);
    expect(state.checkpoint.checkpoint_id).toBe(edited.configurable!.checkpoint_id);
    expect(state.next).toEqual(["MAIN"]);
    expect(state.values.messages.at(-1)).toMatchObject({ type: "human", content: "hello again" });
  });

  it("runs stateless, leaving no thread behind", async () => {
    const before = await alice.threads.count();
    const values: Loose = await alice.runs.wait(null, "agent", { input: human("hi") });
    expect(values.messages.at(-1).content).toBe("hello there friend");
    const events = await collect(alice.runs.stream(null, assistantId, { input: human("hi") }));
    expect(events.at(-1)!.data.messages).toHaveLength(2);
    expect(await alice.threads.count()).toBe(before);
  });

  it("refuses another user's thread", async () => {
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, assistantId, { input: human("hi") });
    await expect(bob.threads.get(thread.thread_id)).rejects.toMatchObject({ status: 403 });
    await expect(bob.threads.getState(thread.thread_id)).rejects.toMatchObject({ status: 403 });
    await expect(bob.threads.getHistory(thread.thread_id)).rejects.toMatchObject({ status: 403 });
    await expect(
      bob.runs.wait(thread.thread_id, assistantId, { input: human("mine now") }),
    ).rejects.toMatchObject({ status: 403 });
    await expect(bob.threads.delete(thread.thread_id)).rejects.toMatchObject({ status: 403 });
    expect((await bob.threads.search()).map((t) => t.thread_id)).not.toContain(thread.thread_id);
    expect((await alice.threads.getState(thread.thread_id)).values).toMatchObject({
      messages: [{ content: "hi" }, { content: "hello there friend" }],
    });
  });

  it("answers bad input with LangGraph's error statuses, and writes nothing", async () => {
    const before = await alice.threads.count();
    const missing = "0198a6c1-0000-7000-8000-000000000000";
    await expect(
      alice.runs.wait(missing, assistantId, { input: human("hi") }),
    ).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      alice.runs.wait(null, "no-such-graph", { input: human("hi") }),
    ).rejects.toMatchObject({
      status: 404,
    });
    const thread = await alice.threads.create();
    await expect(
      collect(
        alice.runs.stream(thread.thread_id, assistantId, {
          input: human("hi"),
          streamMode: "nope" as never,
        }),
      ),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      alice.runs.wait(thread.thread_id, assistantId, {
        input: { messages: [{ type: "robot", content: "x" }] },
      }),
    ).rejects.toMatchObject({ status: 422 });
    for (const breakpoint of [{ interruptBefore: ["NOPE"] }, { interruptAfter: ["MAIN", "X"] }])
      await expect(
        alice.runs.wait(thread.thread_id, assistantId, { input: human("hi"), ...breakpoint }),
      ).rejects.toMatchObject({ status: 422 });
    await expect(
      alice.runs.wait(thread.thread_id, assistantId, {
        input: human("hi"),
        webhook: "http://127.0.0.1:9/hook",
      }),
    ).rejects.toMatchObject({ status: 422 });
    expect((await alice.threads.getHistory(thread.thread_id)).length).toBe(1);
    expect(await alice.threads.count()).toBe(before + 1);
    await alice.threads.delete(thread.thread_id);
    await expect(alice.threads.get(thread.thread_id)).rejects.toMatchObject({ status: 404 });
  });
  it("puts, gets, searches, lists and deletes store items, per user", async () => {
    await alice.store.putItem(["prefs", "ui"], "theme", { color: "blue" });
    await alice.store.putItem(["prefs", "mail"], "digest", { daily: true });
    expect((await alice.store.getItem(["prefs", "ui"], "theme"))?.value).toEqual({ color: "blue" });
    await alice.store.putItem(["prefs", "ui"], "theme", { color: "green" });
    const found = await alice.store.searchItems(["prefs"], { filter: { color: "green" } });
    expect(found.items.map((i) => i.key)).toEqual(["theme"]);
    expect((await alice.store.listNamespaces({ prefix: ["prefs"] })).namespaces).toEqual([
      ["prefs", "mail"],
      ["prefs", "ui"],
    ]);
    await expect(bob.store.getItem(["prefs", "ui"], "theme")).rejects.toMatchObject({
      status: 404,
    });
    await alice.store.deleteItem(["prefs", "ui"], "theme");
    await expect(alice.store.getItem(["prefs", "ui"], "theme")).rejects.toMatchObject({
      status: 404,
    });
  });

  it("answers runs.create with a 501 without a queue, as /v1 does, and writes nothing", async () => {
    const thread = await alice.threads.create();
    const refused = await alice.runs
      .create(thread.thread_id, "agent", { input: human("hi") })
      .catch((e: Loose) => e);
    expect(refused).toMatchObject({ status: 501 });
    expect(String(refused.message)).toMatch(/runs\.postgres_dsn/);
    expect((await alice.threads.getHistory(thread.thread_id)).length).toBe(1);
  });
});

describe("tenxgraph api serving a langgraph.json with two graphs", () => {
  let cli: CliProcess;
  let client: Client;
  let url: string;
  const dir = join(scratch, "langgraph-json");

  beforeAll(async () => {
    writeLangGraphJsonProject(dir);
    cli = new CliProcess(["api", "--port", "0"], { cwd: dir });
    url = await cli.url();
    client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
  });
  afterAll(async () => {
    await cli?.stop();
  });

  it("makes each graph an assistant, runs each, and serves the first on /v1", async () => {
    expect(cli.output).toMatch(/serving .*langgraph\.json/);
    const assistants = await client.assistants.search();
    expect(assistants.map((a) => a.graph_id)).toEqual(["agent", "echo"]);
    const thread = await client.threads.create({ graphId: "echo" });
    const values: Loose = await client.runs.wait(thread.thread_id, "echo", { input: human("hi") });
    expect(values.messages.at(-1).content).toBe("hey: hi");
    expect((await client.threads.getState(thread.thread_id)).next).toEqual([]);
    const stateless: Loose = await client.runs.wait(null, assistants[0]!.assistant_id, {
      input: human("hi"),
    });
    expect(stateless.messages.at(-1).content).toBe("hello there friend");
    const v1 = await fetch(`${url}/v1/graph/invoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi", message_id: "0" }] }),
    });
    const answer = (await v1.json()) as Loose;
    expect(answer.data.messages.at(-1).content[0].text).toBe("hello there friend");
    await expect(client.threads.create({ graphId: "nope" })).rejects.toMatchObject({ status: 422 });
  });
});

describe.each(STORE_KINDS)(
  "a tenxgraph api on %s SIGKILLed mid tool node, continued through the SDK",
  (kind) => {
    const dir = join(scratch, `crash-${kind}`);
    let store: StoreSpec;
    let cli: CliProcess | undefined;
    afterAll(async () => {
      await cli?.stop();
      if (store) await dropStore(store);
    });

    it("replays the recorded charge: the card is charged once", async () => {
      store = storeFor(kind, "lg_sdk_crash", dir);
      writeLgProject(dir, store);
      writeFileSync(join(dir, "hold"), "");
      const env = { JWT_SECRET_KEY: TEST_JWT_SECRET };
      cli = new CliProcess(["api", "--port", "0"], { cwd: dir, env });
      let url = await cli.url();
      let alice = await clientFor(url, "alice");
      const token = await tokenFor("alice");
      const thread = await alice.threads.create();
      const first = alice.runs
        .wait(thread.thread_id, "agent", { input: human("crash") })
        .catch((e) => e);
      // The charge is recorded in the ledger while wait_for_bank still holds the tool node.
      for (;;) {
        const ledger = await fetch(`${url}/v1/threads/${thread.thread_id}/ledger`, {
          headers: { authorization: `Bearer ${token}` },
        });
        const entries = ((await ledger.json()) as Loose).data?.entries ?? [];
        if (entries.some((e: Loose) => e.tool_name === "charge_card" && e.status === "completed"))
          break;
        await sleep(50);
      }
      cli.child.kill("SIGKILL");
      await cli.exited;
      expect(await first).toBeInstanceOf(Error);
      rmSync(join(dir, "hold"));

      cli = new CliProcess(["api", "--port", "0"], { cwd: dir, env });
      url = await cli.url();
      alice = await clientFor(url, "alice");
      // wait_for_bank was started and never recorded: a copy could run it again.
      const refused = await alice.threads.copy(thread.thread_id).catch((e: Loose) => e);
      expect(refused).toMatchObject({ status: 409 });
      expect(String(refused.message)).toMatch(/in doubt/);
      expect((await alice.threads.search()).map((t) => t.thread_id)).toEqual([thread.thread_id]);
      // The dead run's lease runs out first: enqueue waits for it instead of a 409.
      const stream = await collect(
        alice.runs.stream(thread.thread_id, "agent", {
          input: null,
          multitaskStrategy: "enqueue",
          streamMode: ["values", "events"],
        }),
      );
      const values: Loose = stream.filter((e) => e.event === "values").at(-1)!.data;
      // The events stream says which call the ledger replayed.
      const toolEnds = stream
        .filter((e) => e.event === "events" && e.data.event === "on_tool_end")
        .map((e) => e.data);
      expect(toolEnds.map((e) => [e.name, e.metadata.tenxgraph.replayed]).sort()).toEqual([
        ["charge_card", true],
        ["wait_for_bank", false],
      ]);
      expect(toolEnds.find((e) => e.name === "charge_card").data.input).toEqual({ order_id: "7" });
      expect(values.messages.at(-1).content).toMatch(/^done: /);
      expect(values.messages.filter((m: Loose) => m.type === "tool")).toHaveLength(2);
      expect(readFileSync(join(dir, "charges.log"), "utf8")).toBe("charged 7\n");
      const state: Loose = await alice.threads.getState(thread.thread_id);
      const charge = state.values.messages.find((m: Loose) => m.tool_call_id === "call_c");
      expect(charge.response_metadata.tenxgraph).toMatchObject({
        ledger_status: "completed",
        attempt: 1,
      });
    }, 60_000);
  },
);

/** The first `on_chain_start` of `node` among `events`. */
function nodeStart(events: Loose[], node: string): Loose {
  return events.find((e) => e.event === "on_chain_start" && e.name === node);
}
