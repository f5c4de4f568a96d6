import type { Granularity, InvokeResult, RunMeta } from "@tenxgraph/client";
import type { BaseState, RunResult } from "@tenxgraph/core";
import { toWireMessage } from "../wire/convert-message.js";
import { toWireState, wireSummary } from "../wire/wire-state.js";
import { remotePlaceholders } from "../wire/wire-remote-tools.js";
import type { PreparedRun } from "./run-request.js";

/**
 * `POST /v1/graph/invoke`'s answer: the run's messages (a placeholder per remote tool call it
 * paused for), then with `partial` the whole transcript and summary, with `full` the state.
 * The run's result is the thread as committed: no read after the run.
 */
export function invokeAnswer(
  run: PreparedRun,
  result: RunResult<BaseState>,
  granularity: Granularity,
): InvokeResult {
  const meta: RunMeta = {
    is_new_thread: run.isNewThread,
    thread_id: run.threadId,
    run_id: result.runId,
    status: result.status,
    version: result.version,
    interrupts: result.interrupts,
  };
  if (run.threadName !== undefined) meta.thread_name = run.threadName;
  const data: InvokeResult = {
    messages: [
      ...result.state.messages.slice(run.messagesBefore).map(toWireMessage),
      ...remotePlaceholders(result.interrupts),
    ],
    meta,
  };
  if (granularity !== "low") {
    data.context = result.state.messages.map(toWireMessage);
    data.summary = wireSummary(result.state as unknown as Record<string, unknown>);
  }
  if (granularity === "full") {
    const { state, version, currentNode, step, status, interrupts } = result;
    const thread = { values: state, version, currentNode, step, status, interrupts };
    data.state = toWireState(run.threadId, thread);
  }
  return data;
}
