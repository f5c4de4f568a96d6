import { describe, expect, it } from "vitest";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { Message } from "../messages/message.js";
import { interrupt } from "../node/interrupt.js";
import { recordingLogger, settle } from "../support/helpers.js";
import { Command, isCommand } from "./command.js";
import { END } from "./edges.js";
import type { BaseState } from "./reducers.js";
import { Send, isSend } from "./send.js";
import { StateGraph } from "../graph/state-graph.js";

interface Triage extends BaseState {
  route: string;
  handled: string[];
}

function triage(goto: () => unknown) {
  return new StateGraph<Triage>({
    reducers: { handled: (a, b) => [...a, ...b] },
    initialState: { route: "", handled: [] },
  })
    .addNode("TRIAGE", () => new Command({ update: { route: "picked" }, goto: goto() as string }), {
      ends: ["BILLING", "SUPPORT", END],
    })
    .addNode("BILLING", () => ({ handled: ["billing"] }))
    .addNode("SUPPORT", () => ({ handled: ["support"] }))
    .addEdge("BILLING", END)
    .addEdge("SUPPORT", END)
    .setEntryPoint("TRIAGE")
    .compile({ logger: recordingLogger() });
}

describe("Command", () => {
  it("is recognised by a stable brand, as Send is, and keeps only the fields given", () => {
    expect(isCommand(new Command({ goto: "A" }))).toBe(true);
    expect(isCommand({ goto: "A" })).toBe(false);
    expect(isSend(new Send("A", {}))).toBe(true);
    expect(Object.hasOwn(new Command({ goto: "A" }), "resume")).toBe(false);
    expect(Object.hasOwn(new Command({ resume: undefined }), "resume")).toBe(true);
  });

  it("applies its update and routes to its goto in one value", async () => {
    const app = triage(() => "BILLING");
    const result = await app.invoke({ messages: [Message.user("refund")] }, { threadId: "t" });
    expect(result.state).toMatchObject({ route: "picked", handled: ["billing"] });

    const events: unknown[] = [];
    const stream = triage(() => "SUPPORT").stream(
      { messages: [] },
      { threadId: "s", streamMode: "updates" },
    );
    for await (const chunk of stream) events.push(chunk);
    expect(events).toEqual([
      { TRIAGE: { route: "picked" } },
      { SUPPORT: { handled: ["support"] } },
    ]);
  });

  it("goes to END, to several nodes, or to Sends, besides the node's own edges", async () => {
    expect(
      (await triage(() => END).invoke({ messages: [] }, { threadId: "e" })).state,
    ).toMatchObject({ route: "picked", handled: [] });
    const both = await triage(() => ["BILLING", "SUPPORT"]).invoke(
      { messages: [] },
      { threadId: "b" },
    );
    expect(both.state.handled).toEqual(["billing", "support"]);
    const sent = await triage(() => [new Send("BILLING", {}), new Send("BILLING", {})]).invoke(
      { messages: [] },
      { threadId: "s" },
    );
    expect(sent.state.handled).toEqual(["billing", "billing"]);
  });

  it("refuses a goto to a node the graph does not have (GRAPH_006), writing nothing of the step", async () => {
    const app = triage(() => "NOWHERE");
    const failed = await settle(app.invoke({ messages: [] }, { threadId: "t" }));
    expect(!failed.ok && isTenxgraphError(failed.error, "GRAPH_006")).toBe(true);
    expect((await app.getState({ threadId: "t" }))?.values.route).toBe("");
  });

  it("answers an interrupt as a run's input: new Command({ resume })", async () => {
    const app = new StateGraph<Triage>({ initialState: { route: "", handled: [] } })
      .addNode("ASK", () => ({ route: interrupt<string>("where?") }))
      .addEdge("ASK", END)
      .setEntryPoint("ASK")
      .compile({ logger: recordingLogger() });
    const paused = await app.invoke({ messages: [] }, { threadId: "t" });
    expect(paused.status).toBe("interrupted");

    const resumed = await app.invoke(
      new Command({ resume: "billing", interruptId: paused.interrupts[0]!.id }),
      { threadId: "t" },
    );
    expect(resumed.state.route).toBe("billing");

    const refused = await settle(app.invoke(new Command({ goto: "ASK" }), { threadId: "t" }));
    expect(!refused.ok && isTenxgraphError(refused.error, "INPUT_001")).toBe(true);
  });
});
