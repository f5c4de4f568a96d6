import type { Checkpointer } from "@tenxgraph/core/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../support/store-spec.js";
import type { WorkerProcess } from "../support/worker-process.js";
import { agentGraph } from "./support/agent-graph.js";
import { readEffects } from "./support/effect-log.js";
import { readThread } from "./support/read-thread.js";
import type { Blocker, StopTargetParams } from "./support/stop-target-worker.js";
import { createTempStore } from "./support/temp-store.js";
import { killWorkers, startWorkers } from "./support/worker-pool.js";
import { request, sendCommand } from "./support/worker-commands.js";

const store = createTempStore("stop");
let target: WorkerProcess;
let checkpointer: Checkpointer;

beforeAll(async () => {
  const params: StopTargetParams = { store: store.spec, logPath: store.logPath };
  [target] = (await startWorkers("./stop-target-worker.ts", [params])) as [WorkerProcess];
  checkpointer = openStore(store.spec);
});

afterAll(async () => {
  await killWorkers([target]);
  await checkpointer.close();
  store.remove();
});

/**
 * Starts a run in the target process and waits until it sits in its `blocker` tool; then this
 * process, which shares nothing with it but the file, stops the thread with `app.stop`.
 */
async function stopFromHere(threadId: string, blocker: Blocker): Promise<Promise<unknown>> {
  const ran = request(target, { type: "run", threadId, blocker }, "ran");
  await target.waitFor((message) => message.type === "blocked" && message.threadId === threadId);
  // This process's own graph: it runs nothing on the thread, so the stop can only reach the
  // target through the store.
  await agentGraph({ checkpointer, tools: [], turns: [] }).stop({ threadId });
  return ran;
}

/** Effects of `threadId` as `<event> <tool>`, in log order. */
function effectsOf(threadId: string): string[] {
  return readEffects(store.logPath)
    .filter((effect) => effect.threadId === threadId)
    .map((effect) => `${effect.event} ${effect.tool}`);
}

describe("app.stop from another process", () => {
  it("ends a run blocked in a tool as stopped, and no tool starts after it", async () => {
    const ran = await stopFromHere("blocked", "block");
    expect(await ran).toMatchObject({ status: "stopped", code: null });

    const { checkpoint, messages } = await readThread(store.spec, "blocked");
    expect(checkpoint).toMatchObject({ status: "stopped", currentNode: "TOOL" });
    // The tool saw its signal; the model was not asked again and `after` never started.
    expect(effectsOf("blocked")).toEqual(["start block", "aborted block"]);
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant"]);
  });

  it("ends a run whose tool ignores its signal; the tool's late return changes nothing", async () => {
    const ran = await stopFromHere("ignore_signal", "ignore_signal");
    expect(await ran).toMatchObject({ status: "stopped", code: null });
    await sendCommand(target, { type: "release" });
    await target.waitFor(
      (message) => message.type === "returned" && message.threadId === "ignore_signal",
    );

    const { checkpoint, messages, ledger } = await readThread(store.spec, "ignore_signal");
    expect(checkpoint).toMatchObject({ status: "stopped", currentNode: "TOOL" });
    expect(effectsOf("ignore_signal")).toEqual(["start ignore_signal", "returned ignore_signal"]);
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    // The late result was not recorded: the call stays in doubt for whoever continues.
    expect(ledger.map((entry) => [entry.toolName, entry.status])).toEqual([
      ["ignore_signal", "started"],
    ]);
  });
});
