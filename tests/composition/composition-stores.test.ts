import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Command,
  END,
  InMemoryCheckpointer,
  Message,
  Send,
  StateGraph,
  ToolNode,
  interrupt,
  silentLogger,
  tool,
  type BaseState,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { dropStore, freshStore } from "../support/fresh-store.js";
import { openStore, type StoreSpec } from "../support/store-spec.js";

/**
 * Fan-out, joins, Send, Command and subgraphs on every store: the same graphs, the same
 * answers, one write per step, and ledger entries per branch.
 */
const KINDS = ["memory", "sqlite", "postgres"] as const;
type Kind = (typeof KINDS)[number];

/** Every store keeps a checkpoint's `frontier`, which a fan-out step read back needs. */
const FRONTIER_KINDS: readonly Kind[] = ["memory", "sqlite", "postgres"];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A new empty store of `kind`, closed and removed after the test. */
function storeOf(kind: Kind, name: string): Checkpointer {
  if (kind === "memory") return new InMemoryCheckpointer();
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-composition-"));
  const spec: StoreSpec = freshStore(kind, name, dir);
  const store = openStore(spec);
  cleanups.push(async () => {
    await store.close();
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

/** Counts the store's commits (checkpoint writes, step writes, ledger writes). */
function counting(store: Checkpointer): { store: Checkpointer; commits: () => number } {
  let commits = 0;
  const writes = new Set(["putCheckpoint", "commitStep", "claimCalls", "completeCall"]);
  const proxy = new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return (...args: unknown[]) => {
        if (writes.has(name)) commits += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, commits: () => commits };
}

interface Notes extends BaseState {
  notes: string[];
  topic?: string;
}

const notesState = () => ({
  reducers: { notes: (current: string[], update: string[]) => [...current, ...update] },
  initialState: { notes: [] as string[] },
});

describe.each(KINDS)("composition on %s", (kind) => {
  it("Command: update and goto in one value", async () => {
    const app = new StateGraph<Notes>(notesState())
      .addNode("TRIAGE", () => new Command({ update: { notes: ["triaged"] }, goto: "BILLING" }), {
        ends: ["BILLING"],
      })
      .addNode("BILLING", () => ({ notes: ["billing"] }))
      .addEdge("BILLING", END)
      .setEntryPoint("TRIAGE")
      .compile({ checkpointer: storeOf(kind, "command"), logger: silentLogger });
    const result = await app.invoke({ messages: [Message.user("refund")] }, { threadId: "t" });
    expect(result.state.notes).toEqual(["triaged", "billing"]);
    expect((await app.getState({ threadId: "t" }))?.values.notes).toEqual(["triaged", "billing"]);
  });

  it("a 4-way Send fan-out with a join: merged in send order, one commit per step", async () => {
    const { store, commits } = counting(storeOf(kind, "fan_out"));
    const app = new StateGraph<Notes>(notesState())
      .addNode("PLAN", () => ({}))
      .addNode("RESEARCH", async (state) => {
        // The first topic finishes last: the merge follows the sends.
        await new Promise((resolve) => setTimeout(resolve, state.topic === "a" ? 30 : 0));
        return { notes: [`on ${state.topic}`] };
      })
      .addNode("FACTS", () => ({ notes: ["facts"] }))
      .addNode("WRITE", (state) => ({ notes: [`report of ${state.notes.length}`] }))
      .addConditionalEdges("PLAN", () =>
        ["a", "b", "c", "d"].map((topic) => new Send("RESEARCH", { topic })),
      )
      .addEdge("PLAN", "FACTS")
      .addEdge(["RESEARCH", "FACTS"], "WRITE")
      .addEdge("WRITE", END)
      .setEntryPoint("PLAN")
      .compile({ checkpointer: store, logger: silentLogger });

    const result = await app.invoke({ messages: [] }, { threadId: "t" });

    expect(result.state.notes).toEqual(["on a", "on b", "on c", "on d", "facts", "report of 5"]);
    // Start, PLAN, the five tasks of the fan-out step, WRITE: four writes, one per step.
    expect(result.step).toBe(3);
    expect(commits()).toBe(4);
    expect((await app.getState({ threadId: "t" }))?.values.notes).toEqual(result.state.notes);
  });

  it("the same call in two Send branches gets two ledger entries, one per branch", async () => {
    const { app, charged } = twoRegions(storeOf(kind, "send_ledger"), 0);

    const result = await app.invoke({ messages: [] }, { threadId: "t" });

    expect(result.status).toBe("completed");
    expect(charged.sort()).toEqual(["eu", "us"]);
    const keys = (await app.getToolLedger({ threadId: "t" })).map((entry) => entry.key).sort();
    expect(keys).toEqual(["TOOLS:0|m-1:call_1", "TOOLS:1|m-1:call_1"]);
  });

  it("a subgraph's interrupt pauses the parent and is answered through it by id", async () => {
    const worker = new StateGraph<Notes>(notesState())
      .addNode("DRAFT", () => ({ notes: [`draft: ${interrupt<string>("go on?")}`] }))
      .addEdge("DRAFT", END)
      .setEntryPoint("DRAFT")
      .compile({ logger: silentLogger });
    const store = storeOf(kind, "subgraph");
    const app = new StateGraph<Notes>(notesState())
      .addNode("WORKER", worker)
      .addNode("AFTER", () => ({ notes: ["after"] }))
      .addEdge("WORKER", "AFTER")
      .addEdge("AFTER", END)
      .setEntryPoint("WORKER")
      .compile({ checkpointer: store, logger: silentLogger });

    const paused = await app.invoke({ messages: [] }, { threadId: "t" });
    expect(paused.interrupts.map((i) => i.id)).toEqual(["WORKER|DRAFT:0"]);
    const done = await app.invoke(new Command({ resume: "yes" }), { threadId: "t" });

    expect(done.status).toBe("completed");
    // The child's whole state comes back through the reducer: its notes are the draft.
    expect(done.state.notes).toEqual(["draft: yes", "after"]);
    expect(await store.getCheckpoint("t|WORKER@0")).toMatchObject({ status: "completed" });
  });

  it("a subgraph's threads are listed under their parent only, and deleted with it", async () => {
    const inner = new StateGraph<Notes>(notesState())
      .addNode("NOTE", () => ({ notes: ["inner"] }))
      .addEdge("NOTE", END)
      .setEntryPoint("NOTE")
      .compile({ logger: silentLogger });
    const worker = new StateGraph<Notes>(notesState())
      .addNode("INNER", inner)
      .addEdge("INNER", END)
      .setEntryPoint("INNER")
      .compile({ logger: silentLogger });
    const store = storeOf(kind, "child_threads");
    const app = new StateGraph<Notes>(notesState())
      .addNode("WORKER", worker)
      .addEdge("WORKER", END)
      .setEntryPoint("WORKER")
      .compile({ checkpointer: store, logger: silentLogger });
    // A top-level thread whose id merely starts like the parent's.
    await app.invoke({ messages: [] }, { threadId: "t|x" });
    await app.invoke({ messages: [] }, { threadId: "t" });
    const ids = async (parentThreadId?: string) =>
      (await store.listThreads({ parentThreadId })).map((thread) => thread.threadId);

    expect(await ids()).toEqual(["t", "t|x"]);
    expect(await ids("t")).toEqual(["t|WORKER@0"]);
    expect(await ids("t|WORKER@0")).toEqual(["t|WORKER@0|INNER@0"]);

    await app.deleteThread({ threadId: "t" });
    for (const threadId of ["t", "t|WORKER@0", "t|WORKER@0|INNER@0"]) {
      expect(await store.getCheckpoint(threadId), threadId).toBeNull();
    }
    expect(await ids()).toEqual(["t|x"]);
    expect(await ids("t|x")).toEqual(["t|x|WORKER@0"]);
  });
});

describe.each(FRONTIER_KINDS)("a fan-out step read back on %s", (kind) => {
  it("replays each Send branch's recorded call when the step runs again after a sibling failed", async () => {
    const { app, charged } = twoRegions(storeOf(kind, "send_replay"), 1);

    await expect(app.invoke({ messages: [] }, { threadId: "t" })).rejects.toThrow("flaky sibling");
    const continued = await app.invoke(null, { threadId: "t" });

    expect(continued.status).toBe("completed");
    expect(charged.sort()).toEqual(["eu", "us"]);
    const keys = (await app.getToolLedger({ threadId: "t" })).map((entry) => entry.key).sort();
    expect(keys).toEqual(["TOOLS:0|m-1:call_1", "TOOLS:1|m-1:call_1"]);
  });
});

/**
 * MODEL asks for one `charge` call; two Send branches run it through TOOLS, one per region,
 * beside FLAKY, which fails `failures` times.
 */
function twoRegions(checkpointer: Checkpointer, failures: number) {
  const charged: string[] = [];
  const charge = tool({
    name: "charge",
    description: "charges in the branch's region",
    schema: z.object({}),
    execute: (_args, ctx) => {
      const region = (ctx.state as Notes).topic!;
      charged.push(region);
      return `charged in ${region}`;
    },
  });
  let left = failures;
  const app = new StateGraph<Notes>(notesState())
    .addNode("MODEL", () => ({
      ...Message.assistant("", [{ id: "call_1", name: "charge", arguments: "{}" }]),
      id: "m-1",
    }))
    .addNode("TOOLS", new ToolNode<Notes>([charge]))
    .addNode("FLAKY", () => {
      if (left-- > 0) throw new Error("flaky sibling");
    })
    .addConditionalEdges("MODEL", () => [
      new Send("TOOLS", { topic: "eu" }),
      new Send("TOOLS", { topic: "us" }),
      "FLAKY",
    ])
    .addEdge("TOOLS", END)
    .addEdge("FLAKY", END)
    .setEntryPoint("MODEL")
    .compile({ checkpointer, logger: silentLogger });
  return { app, charged };
}
