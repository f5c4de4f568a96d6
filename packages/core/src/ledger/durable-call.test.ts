import { ROOT_CONTEXT } from "@opentelemetry/api";
import { RuntimeTracing } from "../events/tracing.js";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../events/logger.js";
import { RuntimeMetrics } from "../events/metrics.js";
import { uuidv7 } from "../messages/ids.js";
import { Message } from "../messages/message.js";
import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import { sleepInterrupt } from "../node/interrupt.js";
import { RunWatch } from "../node/run-watch.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { checkpointWrite } from "../testing/conformance/fixtures.js";
import { StepLedger } from "../node/step-ledger.js";
import { planCalls } from "./claim.js";
import { MISSING_STORE } from "../store/missing-store.js";
import { durableCall, type CallWork } from "./durable-call.js";
import type { LedgerCall } from "./ledger-call.js";
import { argsDigest } from "./args-digest.js";

/*
 * The ledger protocol on its own, without ToolNode: a call is planned, then carried by
 * durableCall with the tool run passed in as a callback.
 */

const watches: RunWatch[] = [];
afterEach(() => watches.splice(0).forEach((watch) => watch.dispose()));

function nodeContext(checkpointer: InMemoryCheckpointer, threadId: string): NodeContext {
  const watch = new RunWatch({
    checkpointer,
    threadId,
    stopRequestsAtStart: 0,
    intervalMs: 60_000,
    leaseMs: 60_000,
    logger: silentLogger,
    onStopRequested: () => {},
  });
  watches.push(watch);
  const signal = new AbortController().signal;
  return {
    threadId,
    runId: uuidv7(),
    userId: null,
    node: "TOOL",
    step: 1,
    signal,
    deadlineAt: null,
    logger: silentLogger,
    emit: () => {},
    write: () => {},
    newId: uuidv7,
    store: MISSING_STORE,
    sleep: sleepInterrupt,
    runtime: {
      nodeAbort: signal,
      checkpointer,
      metrics: new RuntimeMetrics(),
      tracing: new RuntimeTracing(),
      traceContext: ROOT_CONTEXT,
      ids: uuidv7,
      toolTimeoutMs: null,
      ledgerNamespace: "",
      resumeAnswers: {},
      watch,
      stepLedger: new StepLedger(checkpointer, threadId, silentLogger),
      claimStaleAfterMs: 60_000,
      isEndedLocalRun: () => false,
      faultPoints: undefined,
      remoteTools: [],
      reducers: {},
      toolRenames: new Map(),
    },
  };
}

function chargeCall(): LedgerCall {
  return {
    call: { id: "call_1" },
    tool: { name: "charge_card", timeout: undefined, onInDoubt: "retry" },
    args: { order_id: "4821" },
    origin: "m-1:call_1",
    argsDigest: argsDigest('{"order_id":"4821"}'),
    key: "m-1:call_1",
    unscopedKey: null,
    recordedToolName: "charge_card",
    log: silentLogger,
  };
}

describe("durableCall", () => {
  it("runs the callback once and records it; the next execution replays the record", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const threadId = "thread-durable-call";
    await checkpointer.putCheckpoint(checkpointWrite(threadId, 0));
    let charges = 0;
    const work: CallWork = {
      run: async (attempt) => {
        attempt.started = true;
        charges += 1;
        return {
          message: Message.tool("call_1", "Charged 42 USD"),
          errorCode: null,
          changes: { charged: true },
          updates: [{ total: 42 }, { total: 1 }],
        };
      },
      context: () => ({}),
      // A sibling is still going: this result is recorded as the tool returns (ledger v1).
      returnedLast: async () => false,
    };

    for (const expected of [{ replayed: false }, { replayed: true }]) {
      const ctx = nodeContext(checkpointer, threadId);
      const call = chargeCall();
      const [plan] = await planCalls([call], ctx);
      const outcome = await durableCall(call, plan!, work, ctx);
      expect(outcome).toMatchObject({
        ...expected,
        message: { content: "Charged 42 USD" },
        changes: { charged: true },
        updates: [{ total: 42 }, { total: 1 }],
      });
    }
    expect(charges).toBe(1);
    const [entry] = await checkpointer.listCalls(threadId);
    expect(entry).toMatchObject({ key: "m-1:call_1", status: "completed", attempt: 1 });
  });

  it("leaves the node's last result to the step write, which records it fenced", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const threadId = "thread-riding-result";
    await checkpointer.putCheckpoint(checkpointWrite(threadId, 0));
    const work: CallWork = {
      run: async (attempt) => {
        attempt.started = true;
        return {
          message: Message.tool("call_1", "Charged"),
          errorCode: null,
          changes: {},
          updates: [],
        };
      },
      context: () => ({}),
      returnedLast: async () => true,
    };
    const ctx = nodeContext(checkpointer, threadId);
    const call = chargeCall();
    const [plan] = await planCalls([call], ctx);
    await durableCall(call, plan!, work, ctx);
    // Not recorded yet: it waits for the step's write.
    expect(await checkpointer.listCalls(threadId)).toMatchObject([{ status: "started" }]);

    const version = await ctx.runtime.stepLedger.commitWith(
      [],
      ctx.runtime.watch,
      async (ledger) => {
        const committed = await checkpointer.commitStep({
          ...checkpointWrite(threadId, 1),
          ledger,
        });
        return { result: committed.version, claims: committed.claims };
      },
    );
    expect(version).toBe(2);
    expect(await checkpointer.listCalls(threadId)).toMatchObject([
      { status: "completed", attempt: 1, result: { value: { content: "Charged" } } },
    ]);
  });
});
