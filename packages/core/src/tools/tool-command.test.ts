import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Command } from "../definition/command.js";
import type { BaseState } from "../definition/reducers.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import { callsTurn, supportAgent, toolText, withoutStepWrites } from "../support/helpers.js";
import { tool } from "./tool.js";

interface Account extends BaseState {
  user_name: string;
  lookups: number;
}

const state = {
  initialState: { user_name: "", lookups: 0 },
  reducers: { lookups: (current: number, update: number) => current + update },
};

/** LangGraph.js's habit: the tool returns `new Command({ update })` with its tool message. */
function lookupUser(runs: string[], reply: (toolCallId: string) => Command<unknown>) {
  return tool<z.ZodObject<{ id: z.ZodString }>, Account>({
    name: "lookup_user",
    description: "Looks the user up.",
    schema: z.object({ id: z.string() }),
    execute: ({ id }, ctx) => {
      runs.push(id);
      return reply(ctx.toolCallId);
    },
  });
}

const found = (toolCallId: string) =>
  new Command({
    update: {
      user_name: "Ada",
      lookups: 1,
      messages: [Message.tool(toolCallId, "Found the user")],
    },
  });

describe("a tool that returns a Command", () => {
  it("applies its update through the reducers, and its tool message is the call's result", async () => {
    const runs: string[] = [];
    const app = supportAgent<Account>({
      model: [callsTurn("m-1", [["lookup_user", { id: "u-1" }]]), "ok"],
      tools: [lookupUser(runs, found)],
      state,
    });

    const result = await app.invoke({ messages: [Message.user("who?")] }, { threadId: "t" });

    expect(result.state).toMatchObject({ user_name: "Ada", lookups: 1 });
    expect(toolText(result.state, "call_1")).toBe("Found the user");
    const [entry] = await app.getToolLedger({ threadId: "t" });
    expect(entry).toMatchObject({
      status: "completed",
      result: { updates: [{ user_name: "Ada", lookups: 1 }] },
    });
  });

  it("takes LangGraph's plain tool message ({ role, content, tool_call_id })", async () => {
    const app = supportAgent<Account>({
      model: [callsTurn("m-1", [["lookup_user", { id: "u-1" }]]), "ok"],
      tools: [
        lookupUser([], (toolCallId) => {
          const message = { role: "tool", content: "Found", tool_call_id: toolCallId };
          return new Command({ update: { user_name: "Ada", messages: [message] } });
        }),
      ],
      state,
    });

    const result = await app.invoke({ messages: [Message.user("who?")] }, { threadId: "t" });

    expect(result.state.user_name).toBe("Ada");
    expect(toolText(result.state, "call_1")).toBe("Found");
  });

  it("replays the recorded update after a crash, and never runs the tool again", async () => {
    const runs: string[] = [];
    const checkpointer = withoutStepWrites(new InMemoryCheckpointer());
    const crash = new FaultPoints().arm(
      "ledger.after_record",
      () => {
        throw new Error("crashed after the record");
      },
      { times: 1 },
    );
    const options = {
      model: [callsTurn("m-1", [["lookup_user", { id: "u-1" }]]), "ok"],
      tools: [lookupUser(runs, found)],
      state,
      checkpointer,
    };
    const first = supportAgent<Account>({ ...options, faultPoints: crash });
    await expect(
      first.invoke({ messages: [Message.user("who?")] }, { threadId: "t" }),
    ).rejects.toThrow("crashed after the record");
    expect((await first.getState({ threadId: "t" }))?.values.user_name).toBe("");

    const continued = await supportAgent<Account>(options).invoke(null, { threadId: "t" });

    expect(runs).toEqual(["u-1"]);
    expect(continued.state).toMatchObject({ user_name: "Ada", lookups: 1 });
    expect(toolText(continued.state, "call_1")).toBe("Found the user");
  });

  it.each([
    {
      what: "resume",
      reply: (id: string) =>
        new Command({ update: { messages: [Message.tool(id, "x")] }, resume: "yes" }),
      says: "with resume",
    },
    {
      what: "no tool message",
      reply: () => new Command({ update: { user_name: "Ada" } }),
      says: "not exactly one tool message answering this call",
    },
    {
      what: "another call's message",
      reply: () => new Command({ update: { messages: [Message.tool("call_9", "x")] } }),
      says: "not exactly one tool message answering this call",
    },
    {
      what: "an extra message",
      reply: (id: string) =>
        new Command({
          update: { messages: [Message.tool(id, "x"), Message.assistant("also this")] },
        }),
      says: "not exactly one tool message answering this call",
    },
  ])("refuses a Command with $what: TOOL_COMMAND_001, recorded, nothing applied", async (c) => {
    const runs: string[] = [];
    const app = supportAgent<Account>({
      model: [callsTurn("m-1", [["lookup_user", { id: "u-1" }]]), "ok"],
      tools: [lookupUser(runs, c.reply)],
      state,
    });

    const result = await app.invoke({ messages: [Message.user("who?")] }, { threadId: "t" });

    expect(toolText(result.state, "call_1")).toContain("[TOOL_COMMAND_001]");
    expect(toolText(result.state, "call_1")).toContain(c.says);
    expect(result.state).toMatchObject({ user_name: "", lookups: 0 });
    const [entry] = await app.getToolLedger({ threadId: "t" });
    expect(entry).toMatchObject({ status: "completed", result: { errorCode: "TOOL_COMMAND_001" } });
    expect(runs).toEqual(["u-1"]);
  });
});
