import { expect, it } from "vitest";
import { z } from "zod";
import { Message } from "../messages/message.js";
import { tool } from "../tools/tool.js";
import { callsTurn, pause, supportAgent, toolMessages } from "../testing/test-support.js";

it("zombie mutates state", async () => {
  type S = { messages: Message[]; counter: number };
  const zombie = tool<z.ZodObject<{}>, S>({
    name: "z", description: "d", schema: z.object({}), timeout: 0.03,
    execute: async (_a, ctx) => { await pause(60); ctx.state.counter = 99; return "late"; },
  });
  const app = supportAgent<S>({
    model: async (state: S) => { const n = state.messages.filter((m) => m.role === "assistant").length; if (n === 0) return callsTurn("m-1", [["z", {}]])(); await pause(150); return Message.assistant("done"); },
    tools: [zombie], state: { initialState: { counter: 0 } },
  });
  const r = await app.invoke({ messages: [Message.user("x")] }, { threadId: "t" });
  console.log("counter", r.state.counter, (await app.getState({ threadId: "t" }))?.values.counter);
});

it("domain key call_1 reuse", async () => {
  const effects: string[] = [];
  const charge = tool({
    name: "charge", description: "d", schema: z.object({ order_id: z.string() }),
    idempotencyKey: (a) => `order-${a.order_id}`,
    execute: (a, ctx) => { effects.push(ctx.idempotencyKey); return "charged"; },
  });
  const app = supportAgent({
    model: [callsTurn("m-1", [["charge", { order_id: "1" }]]), "ok", callsTurn("m-2", [["charge", { order_id: "1" }]]), "ok2"],
    tools: [charge],
  });
  await app.invoke({ messages: [Message.user("x")] }, { threadId: "t" });
  const r = await app.invoke({ messages: [Message.user("again")] }, { threadId: "t" });
  console.log(effects, r.state.messages.map((m) => `${m.role}:${m.id.slice(-4)}:${(m as any).toolCallId ?? ""}:${Message.text(m)}`));
  expect(toolMessages(r.state)).toHaveLength(2);
});
