import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RunAbandonedError } from "../errors/errors.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import { StateGraph } from "../graph/state-graph.js";
import { invokeAsHost, streamAsHost } from "../host/host-run.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { callsTurn, deferred, recordingLogger, settle } from "../support/helpers.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";

/**
 * MODEL asks for one `charge` call, TOOL runs it, MODEL answers. The charge waits for the
 * test's `release`, so a signal can fire while the tool is in flight.
 */
function chargeAgent() {
  const checkpointer = new InMemoryCheckpointer();
  const entered = deferred();
  const release = deferred();
  const charges: number[] = [];
  let turns = 0;
  const charge = tool({
    name: "charge",
    description: "Charges a card.",
    schema: z.object({ cents: z.number() }),
    async execute(args) {
      entered.resolve();
      await release.promise;
      charges.push(args.cents);
      return "charged";
    },
  });
  const app = new StateGraph()
    .addNode("MODEL", () => {
      turns += 1;
      return turns === 1
        ? callsTurn("m1", [["charge", { cents: 500 }]])()
        : Message.assistant("done");
    })
    .addNode("TOOL", new ToolNode([charge]))
    .addConditionalEdges("MODEL", (s: BaseState) =>
      s.messages.at(-1)?.role === "assistant" && turns === 1 ? "TOOL" : END,
    )
    .addEdge("TOOL", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ checkpointer, logger: recordingLogger() });
  return { app, checkpointer, entered, release, charges };
}

describe("drainSignal: stop at the next node boundary", () => {
  it("lets the tool node finish and record its call, then stops before the next node", async () => {
    const { app, checkpointer, entered, release, charges } = chargeAgent();
    const drain = new AbortController();
    const run = invokeAsHost(
      app,
      { messages: [Message.user("charge 5")] },
      { threadId: "t1" },
      { drainSignal: drain.signal },
    );
    await entered.promise;
    drain.abort();
    release.resolve();
    const result = await run;
    expect(result.status).toBe("stopped");
    expect(result.currentNode).toBe("MODEL");
    expect(charges).toEqual([500]);
    const [entry] = await app.getToolLedger({ threadId: "t1" });
    expect(entry).toMatchObject({ status: "completed", attempt: 1 });
    // No call is in doubt: another process continues with the recorded result.
    const continued = await app.invoke(null, { threadId: "t1" });
    expect(continued.status).toBe("completed");
    expect(charges).toEqual([500]);
    expect((await checkpointer.getCheckpoint("t1"))?.status).toBe("completed");
  });

  it("is refused when it is no AbortSignal", async () => {
    const { app } = chargeAgent();
    const outcome = await settle(
      invokeAsHost(
        app,
        null,
        { threadId: "t1" },
        { drainSignal: "soon" as unknown as AbortSignal },
      ),
    );
    expect(outcome.ok).toBe(false);
    expect(String((outcome as { error: unknown }).error)).toContain("controls.drainSignal");
  });

  it("is no run option: invoke and stream refuse it, naming it and where it goes", async () => {
    const { app, checkpointer } = chargeAgent();
    for (const option of ["drainSignal", "abandonSignal", "loadedThread"]) {
      const config = { threadId: "t1", [option]: new AbortController().signal };
      await expect(app.invoke(null, config)).rejects.toMatchObject({
        code: "OPTION_001",
        option,
        message: expect.stringContaining("@tenxgraph/core/host"),
      });
      await expect(settle(app.stream(null, config).next())).resolves.toMatchObject({
        ok: false,
        error: { code: "OPTION_001", option },
      });
    }
    expect(await checkpointer.getCheckpoint("t1")).toBeNull();
  });

  it("steers a stream through streamAsHost, and leaves the caller's config untouched", async () => {
    const { app, entered, release } = chargeAgent();
    const drain = new AbortController();
    const config = { threadId: "t4" };
    const statuses: string[] = [];
    const run = (async () => {
      const events = streamAsHost(app, { messages: [Message.user("charge 5")] }, config, {
        drainSignal: drain.signal,
      });
      for await (const event of events) if (event.type === "run_end") statuses.push(event.status);
    })();
    await entered.promise;
    drain.abort();
    release.resolve();
    await run;
    expect(statuses).toEqual(["stopped"]);
    expect(config).toEqual({ threadId: "t4" });
    // The same config object, without the host's controls, runs as a plain invoke.
    expect((await app.invoke(null, config)).status).toBe("completed");
  });
});

describe("abandonSignal: another execution owns the thread", () => {
  it("ends the run where it is and writes no terminal status", async () => {
    const { app, checkpointer, entered, release } = chargeAgent();
    const abandon = new AbortController();
    const run = settle(
      invokeAsHost(
        app,
        { messages: [Message.user("charge 5")] },
        { threadId: "t2" },
        { abandonSignal: abandon.signal },
      ),
    );
    await entered.promise;
    const before = await checkpointer.getCheckpoint("t2");
    abandon.abort(new Error("lease taken over by worker b"));
    const outcome = await run;
    release.resolve();
    expect(outcome.ok).toBe(false);
    const error = (outcome as { error: unknown }).error;
    expect(error).toBeInstanceOf(RunAbandonedError);
    expect(error).toMatchObject({ code: "RUN_ABANDONED_001" });
    expect(String(error)).toContain("lease taken over by worker b");
    // Neither `stopped` nor `failed` was written: the thread is as the run left it, running.
    const after = await checkpointer.getCheckpoint("t2");
    expect(after?.version).toBe(before?.version);
    expect(after?.status).toBe("running");
  });

  it("rejects before anything is written when it has already fired", async () => {
    const { app, checkpointer } = chargeAgent();
    const outcome = await settle(
      invokeAsHost(
        app,
        { messages: [Message.user("charge 5")] },
        { threadId: "t3" },
        { abandonSignal: AbortSignal.abort("gone") },
      ),
    );
    expect((outcome as { error: unknown }).error).toBeInstanceOf(RunAbandonedError);
    expect(await checkpointer.getCheckpoint("t3")).toBeNull();
  });
});
