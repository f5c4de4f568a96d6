/**
 * A process whose run sits in a tool call that does not return on its own, so another process
 * can stop it. `block` waits for its abort signal; `ignore_signal` does not, and returns
 * only when the parent says `release`. After either, the model would ask for `after`.
 */
import { Message, isTenxgraphError, type ToolContext } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import { openStore } from "../../support/store-spec.js";
import type { StoreSpec } from "../../support/store-spec.js";
import { report, workerParams } from "../../support/worker-process.js";
import { agentGraph } from "./agent-graph.js";
import { appendEffect } from "./effect-log.js";
import { effectTool } from "./effect-tool.js";
import { nextCommand } from "./worker-commands.js";

/** The parameters of a stop target. */
export interface StopTargetParams {
  /** The store every process of the test shares. */
  store: StoreSpec;
  logPath: string;
}

/** Which tool the run blocks in. */
export type Blocker = "block" | "ignore_signal";

const { store: spec, logPath } = workerParams<StopTargetParams>();
const checkpointer = reportingStopPolls(openStore(spec));
const tools = [
  effectTool({ name: "block", logPath, hold: untilAborted }),
  effectTool({ name: "ignore_signal", logPath, hold: untilReleased }),
  effectTool({ name: "after", logPath }),
];
/** Both graphs share the store and run with the default stop poll interval (1 s). */
const graphs = {
  block: agentGraph({ checkpointer, tools, turns: [[call("block")], [call("after")]] }),
  ignore_signal: agentGraph({
    checkpointer,
    tools,
    turns: [[call("ignore_signal")], [call("after")]],
  }),
};
await checkpointer.setup();
await report({ type: "ready" });
for (;;) {
  const command = await nextCommand("run", "exit");
  if (command.type === "exit") break;
  const app = graphs[command.blocker as Blocker];
  const input = { messages: [Message.user("charge order 4821")] };
  try {
    const result = await app.invoke(input, { threadId: command.threadId as string });
    await report({ type: "ran", status: result.status, code: null });
  } catch (error) {
    await report({
      type: "ran",
      status: null,
      code: isTenxgraphError(error) ? error.code : String(error),
    });
  }
}
await checkpointer.close();
process.exit(0);

/**
 * Tells the parent what each of the run's stop polls saw: a test counts the polls a stop
 * request took to reach the run, instead of timing it.
 */
function reportingStopPolls(store: Checkpointer): Checkpointer {
  const count = store.countStopRequests.bind(store);
  store.countStopRequests = async (threadId) => {
    const seen = await count(threadId);
    await report({ type: "stop_poll", threadId, seen });
    return seen;
  };
  return store;
}

function call(name: string) {
  return { name, tag: "4821" };
}

/** Waits for the stop, as a well-behaved tool does, and notes in the log that it saw it. */
async function untilAborted(ctx: ToolContext): Promise<void> {
  await report({ type: "blocked", threadId: ctx.threadId });
  if (!ctx.signal.aborted) {
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
  }
  note("aborted", "block", ctx);
  throw ctx.signal.reason;
}

/** Ignores its signal: returns only when the parent releases it, long after the stop. */
async function untilReleased(ctx: ToolContext): Promise<void> {
  await report({ type: "blocked", threadId: ctx.threadId });
  await nextCommand("release");
  note("returned", "ignore_signal", ctx);
  await report({ type: "returned", threadId: ctx.threadId });
}

/** Appends a non-`start` event of a call to the external log. */
function note(event: string, tool: string, ctx: ToolContext): void {
  const { threadId, runId } = ctx;
  const key = `${ctx.messageId}:${ctx.toolCallId}`;
  appendEffect(logPath, { event, threadId, key, tool, pid: process.pid, runId });
}
