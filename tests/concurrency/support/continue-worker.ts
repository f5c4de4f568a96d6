/**
 * A process that continues (`invoke(null)`) unfinished threads whose tool node has pending
 * calls, each time the parent says `continue`, reporting the run's progress as it goes and its
 * outcome at the end. Its tools may be held open until the parent says `release`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { isTenxgraphError } from "@tenxgraph/core";
import type { StreamEvent, ToolContext } from "@tenxgraph/core";
import { openStore } from "../../support/store-spec.js";
import type { StoreSpec } from "../../support/store-spec.js";
import { report, workerParams } from "../../support/worker-process.js";
import { agentGraph } from "./agent-graph.js";
import { effectTool } from "./effect-tool.js";
import { CLAIM_STALE_AFTER_MS, PENDING_CALLS } from "./seed-thread.js";
import { nextCommand } from "./worker-commands.js";

/** The parameters of a continue worker. */
export interface ContinueWorkerParams {
  /** The store every process of the test shares. */
  store: StoreSpec;
  logPath: string;
  worker: string;
}

/** The `continue` command. */
export interface ContinueCommand {
  type: "continue";
  threadId: string;
  round: number;
  /** Waited before the run starts, to vary where it lands in the other process's run. */
  delayMs: number;
  /** Hold every tool call of this run open (after its effect) until `release`. */
  hold: boolean;
}

/** How a continuation ended, as seen by the process that ran it. */
export interface ContinueOutcome {
  type: "continued";
  round: number;
  worker: string;
  status: string | null;
  code: string | null;
  /** Versions of the durable writes this run committed. */
  versions: number[];
  /** Keys of the calls this run answered from the ledger instead of running them. */
  replayed: string[];
}

/** How long a tool call lasts when not held: long enough for the other process to see its claim. */
const TOOL_MS = 100;

const { store: spec, logPath, worker } = workerParams<ContinueWorkerParams>();
let gate: Promise<unknown> | null = null;
const checkpointer = openStore(spec);
const app = agentGraph({
  checkpointer,
  tools: PENDING_CALLS.map(({ name }) => effectTool({ name, logPath, hold: pause })),
  turns: [PENDING_CALLS],
  compile: { stopPollIntervalMs: 100, claimStaleAfterMs: CLAIM_STALE_AFTER_MS },
});
await checkpointer.setup();
await report({ type: "ready" });
for (;;) {
  const command = await nextCommand("continue", "exit");
  if (command.type === "exit") break;
  const run = command as unknown as ContinueCommand;
  await sleep(run.delayMs);
  gate = run.hold ? nextCommand("release") : null;
  await report({ ...(await continueRun(run)) });
}
await checkpointer.close();
process.exit(0);

async function pause(ctx: ToolContext): Promise<void> {
  if (!gate) {
    await sleep(TOOL_MS);
    return;
  }
  await report({ type: "holding", key: `${ctx.messageId}:${ctx.toolCallId}` });
  await gate;
}

async function continueRun({ threadId, round }: ContinueCommand): Promise<ContinueOutcome> {
  const outcome: ContinueOutcome = {
    type: "continued",
    round,
    worker,
    status: null,
    code: null,
    versions: [],
    replayed: [],
  };
  try {
    for await (const event of app.stream(null, { threadId })) {
      if (event.type === "state") outcome.versions.push(event.version);
      if (event.type === "tool_result" && event.replayed) outcome.replayed.push(event.key!);
      if (event.type === "run_end") outcome.status = event.status;
      await reportProgress(round, event);
    }
  } catch (error) {
    outcome.code = isTenxgraphError(error) ? error.code : String(error);
  }
  return outcome;
}

/** Tells the parent where the run is, so a test can act at a known point of it. */
async function reportProgress(round: number, event: StreamEvent): Promise<void> {
  if (event.type === "node_start") await report({ type: "node", round, node: event.node });
  if (event.type === "tool_start") await report({ type: "tool_start", round, key: event.key });
}
