import { describe, expect, it } from "vitest";
import { z } from "zod";
import { END } from "../definition/edges.js";
import type { StateUpdate } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";

interface State {
  messages: Message[];
  notes: string[];
}

/** MODEL (scripted) → TOOLS (charge_card, counted) → MODEL → END. */
function agent(replies: ConstructorParameters<typeof ScriptedModel<State>>[0]) {
  const charges: string[] = [];
  const chargeCard = tool({
    name: "charge_card",
    description: "Charge an order",
    schema: z.object({ order: z.string() }),
    execute: ({ order }) => {
      charges.push(order);
      return `charged ${order}`;
    },
  });
  const model = new ScriptedModel<State>(replies);
  const checkpointer = new InMemoryCheckpointer();
  const app = new StateGraph<State>({
    initialState: { notes: [] },
    reducers: { notes: (a, b) => [...a, ...b] },
  })
    .addNode("MODEL", async (state, ctx) => ({
      messages: [await model.run(state, ctx)],
    }))
    .addNode("TOOLS", new ToolNode<State>([chargeCard]))
    .addConditionalEdges("MODEL", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls ? "TOOLS" : END;
    })
    .addEdge("TOOLS", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ checkpointer, logger: recordingLogger() });
  return { app, charges, checkpointer };
}

const charge = (order: string) => ({ toolCalls: [{ name: "charge_card", args: { order } }] });
const texts = (messages: readonly Message[]) => messages.map((m) => Message.text(m));

describe("history", () => {
  it("lists every version newest first, with its node, run and parent", async () => {
    const { app } = agent([charge("4821"), "Charged."]);
    const run = await app.invoke({ messages: [Message.user("charge 4821")] }, { threadId: "t" });

    const history = await app.getStateHistory({ threadId: "t" });
    expect(history.map((v) => [v.version, v.node, v.nextNode, v.messageCount])).toEqual([
      [4, "MODEL", null, 4],
      [3, "TOOLS", "MODEL", 3],
      [2, "MODEL", "TOOLS", 2],
      [1, null, "MODEL", 1], // the input
    ]);
    expect(history.every((v) => v.runId === run.runId)).toBe(true);
    expect(history.map((v) => v.parentVersion)).toEqual([3, 2, 1, null]);
    expect(history[0]!.status).toBe("completed");
    expect(Object.keys(history[0]!.values)).toEqual(["notes"]);
    expect(Date.parse(history[0]!.createdAt)).not.toBeNaN();

    const paged = await app.getStateHistory({ threadId: "t" }, { before: 4, limit: 2 });
    expect(paged.map((v) => v.version)).toEqual([3, 2]);
    expect(await app.getStateHistory({ threadId: "nobody" })).toEqual([]);
  });

  it("getState reads any kept version, with its own transcript", async () => {
    const { app } = agent([charge("4821"), "Charged."]);
    await app.invoke({ messages: [Message.user("charge 4821")] }, { threadId: "t" });

    const second = await app.getState({ threadId: "t", version: 2 });
    expect(second).toMatchObject({ version: 2, node: "MODEL", currentNode: "TOOLS" });
    expect(second!.values.messages).toHaveLength(2);
    expect(second!.values.messages[1]!.toolCalls?.[0]?.name).toBe("charge_card");
    expect(await app.getState({ threadId: "t", version: 99 })).toBeNull();
    await expect(app.getState({ threadId: "t", version: 0 })).rejects.toMatchObject({
      code: "INPUT_001",
    });
  });

  it("updateState writes through the reducers, keeping the thread's position", async () => {
    const { app } = agent(["Hello."]);
    await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    const before = await app.getState({ threadId: "t" });

    const version = await app.updateState({ threadId: "t" }, { notes: ["vip"] });
    const after = await app.getState({ threadId: "t" });
    expect(after).toMatchObject({
      version,
      parentVersion: before!.version,
      node: null,
      runId: null,
      status: before!.status,
      currentNode: before!.currentNode,
    });
    expect(after!.values.notes).toEqual(["vip"]);
    await app.updateState({ threadId: "t" }, { notes: ["second"] });
    expect((await app.getState({ threadId: "t" }))!.values.notes).toEqual(["vip", "second"]);
  });

  it("updateState races a write like a step does: one of two wins", async () => {
    const { app } = agent(["Hello."]);
    await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    const results = await Promise.allSettled([
      app.updateState({ threadId: "t" }, { notes: ["a"] }),
      app.updateState({ threadId: "t" }, { notes: ["b"] }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(lost.reason).toMatchObject({ code: "STORAGE_CONFLICT_001" });
  });

  it("updateState asNode moves the thread to the node after it; invoke(null) runs from there", async () => {
    // Replies go by the number of assistant messages: the second is the one updateState writes.
    const { app, charges } = agent(["Done.", "(written by updateState)", "Charged 77."]);
    await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    // As if the model had asked for a charge: the thread then stands at TOOLS.
    const call = { id: "call_9", name: "charge_card", arguments: '{"order":"77"}' };
    await app.updateState(
      { threadId: "t" },
      { messages: [Message.assistant("", [call])] },
      { asNode: "MODEL" },
    );
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      currentNode: "TOOLS",
      status: "stopped",
      node: "MODEL",
    });
    const resumed = await app.invoke(null, { threadId: "t" });
    expect(resumed.status).toBe("completed");
    expect(charges).toEqual(["77"]);
    await expect(app.updateState({ threadId: "t" }, {}, { asNode: "NOPE" })).rejects.toMatchObject({
      code: "INPUT_001",
    });
    await expect(app.updateState({ threadId: "none" }, {})).rejects.toMatchObject({
      code: "THREAD_001",
    });
  });

  it("edits and removes messages as new versions; the old versions keep them", async () => {
    const { app } = agent(["Hello."]);
    await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    const { values, version } = (await app.getState({ threadId: "t" }))!;
    const [question, answer] = values.messages;

    await app.updateState(
      { threadId: "t" },
      {
        messages: [{ ...answer!, content: "Hello, edited." } as Message],
      },
    );
    expect(texts((await app.getState({ threadId: "t" }))!.values.messages)).toEqual([
      "hi",
      "Hello, edited.",
    ]);
    await app.updateState({ threadId: "t" }, { messages: [Message.remove(question!.id)] });
    expect(texts((await app.getState({ threadId: "t" }))!.values.messages)).toEqual([
      "Hello, edited.",
    ]);
    expect(texts((await app.getState({ threadId: "t", version }))!.values.messages)).toEqual([
      "hi",
      "Hello.",
    ]);
    await expect(
      app.updateState({ threadId: "t" }, { messages: [Message.remove("no-such-id")] }),
    ).rejects.toMatchObject({ code: "INPUT_001" });
    await app.updateState({ threadId: "t" }, { messages: [Message.removeAll()] });
    expect((await app.getState({ threadId: "t" }))!.values.messages).toEqual([]);
  });

  it("a node may edit a message by returning it with its id", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const app = new StateGraph()
      .addNode("REDACT", (state) => ({
        messages: state.messages.map(
          (m) => ({ ...m, content: Message.text(m).replace(/\d{4}/g, "****") }) as Message,
        ),
      }))
      .addEdge("REDACT", END)
      .setEntryPoint("REDACT")
      .compile({ checkpointer, logger: recordingLogger() });
    const run = await app.invoke({ messages: [Message.user("card 4242")] }, { threadId: "t" });
    expect(texts(run.state.messages)).toEqual(["card ****"]);
    expect(texts(await checkpointer.listMessages("t"))).toEqual(["card ****"]);
    expect(texts(await checkpointer.listMessages("t", { version: 1 }))).toEqual(["card 4242"]);
  });

  it("forks a past version: the branch goes on from it, the abandoned one stays readable", async () => {
    // Replies go by the number of assistant messages, so the fork gets the second one again.
    const { app } = agent(["First answer.", "Second answer."]);
    await app.invoke({ messages: [Message.user("one")] }, { threadId: "t" });
    const endOfFirst = (await app.getState({ threadId: "t" }))!.version;
    await app.invoke({ messages: [Message.user("two")] }, { threadId: "t" });
    const abandoned = (await app.getState({ threadId: "t" }))!.version;

    const fork = await app.invoke(
      { messages: [Message.user("two, asked differently")] },
      { threadId: "t", fromVersion: endOfFirst },
    );
    expect(texts(fork.state.messages)).toEqual([
      "one",
      "First answer.",
      "two, asked differently",
      "Second answer.",
    ]);
    const history = await app.getStateHistory({ threadId: "t" });
    const firstOfFork = history.find((v) => v.version === abandoned + 1)!;
    expect(firstOfFork.parentVersion).toBe(endOfFirst);
    const old = await app.getState({ threadId: "t", version: abandoned });
    expect(texts(old!.values.messages)).toEqual(["one", "First answer.", "two", "Second answer."]);
  });

  it("a fork replays a recorded call only where it keeps the assistant message that made it", async () => {
    const { app, charges } = agent([charge("4821"), "Charged.", charge("4821"), "Charged again."]);
    await app.invoke({ messages: [Message.user("charge 4821")] }, { threadId: "t" });
    expect(charges).toEqual(["4821"]);

    // Version 2 holds the model's call, not yet run: the fork runs TOOLS with the same message,
    // whose call the ledger has recorded, so the card is not charged again.
    const kept = await app.invoke(null, { threadId: "t", fromVersion: 2 });
    expect(kept.status).toBe("completed");
    expect(charges).toEqual(["4821"]);

    // Version 1 is before the model spoke: the fork asks the model again, a new message with a
    // new call, which is a new charge. Its key is new, so the ledger cannot know it is the same.
    await app.invoke(null, { threadId: "t", fromVersion: 1 });
    expect(charges).toEqual(["4821", "4821"]);
    const ledger = await app.getToolLedger({ threadId: "t" });
    expect(ledger).toHaveLength(2);
  });

  it("refuses a fork of a version the thread does not keep", async () => {
    const { app } = agent(["Hello.", "Again."]);
    await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    await expect(app.invoke(null, { threadId: "t", fromVersion: 42 })).rejects.toMatchObject({
      code: "THREAD_005",
    });
    await expect(app.invoke(null, { threadId: "none", fromVersion: 1 })).rejects.toMatchObject({
      code: "THREAD_001",
    });
    await app.pruneHistory({ threadId: "t" }, { keepLast: 1 });
    await expect(app.invoke(null, { threadId: "t", fromVersion: 1 })).rejects.toMatchObject({
      code: "THREAD_005",
    });
  });

  it("prunes old versions, and deletes threads past their delete-after time", async () => {
    const { app, checkpointer } = agent(["Hello."]);
    await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
    const latest = (await app.getState({ threadId: "t" }))!;
    expect(await app.pruneHistory({ threadId: "t" }, { keepLast: 1 })).toBe(latest.version - 1);
    expect((await app.getStateHistory({ threadId: "t" })).map((v) => v.version)).toEqual([
      latest.version,
    ]);
    expect((await app.getState({ threadId: "t" }))!.values.messages).toEqual(
      latest.values.messages,
    );
    await expect(app.pruneHistory({ threadId: "t" }, { keepLast: 0 })).rejects.toMatchObject({
      code: "INPUT_001",
    });

    expect(await app.setDeleteAfter({ threadId: "t" }, new Date(Date.now() - 1))).toBe(true);
    expect(await checkpointer.deleteExpiredThreads()).toEqual(["t"]);
    expect(await app.getState({ threadId: "t" })).toBeNull();
  });

  it("typed updates: an update may carry removals next to messages", () => {
    const update: StateUpdate<State> = { messages: [Message.removeAll(), Message.user("fresh")] };
    expect(update.messages).toHaveLength(2);
  });
});
