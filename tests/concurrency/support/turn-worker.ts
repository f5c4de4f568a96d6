/**
 * A process that runs a new turn (or continues the thread) each time the parent says `turn`,
 * and reports what it committed. A turn may be held open in its tool call or before the model's final reply, until
 * the parent says `release`, so a test can land another process's turn exactly there.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Message, isTenxgraphError } from "@tenxgraph/core";
import { openStore } from "../../support/store-spec.js";
import type { StoreSpec } from "../../support/store-spec.js";
import { report, workerParams } from "../../support/worker-process.js";
import { agentGraph } from "./agent-graph.js";
import { effectTool } from "./effect-tool.js";
import { nextCommand } from "./worker-commands.js";

/** The parameters of a turn worker. */
export interface TurnWorkerParams {
  /** The store every process of the test shares. */
  store: StoreSpec;
  logPath: string;
  worker: string;
  /** The runs' `durableCheckpointEveryStep` (default `true`). */
  durableCheckpointEveryStep?: boolean;
}

/** Where a turn waits for `release`: in its first tool call, or before the final reply. */
export type HoldPoint = "tool" | "reply";

/** The `turn` command. */
export interface TurnCommand {
  type: "turn";
  threadId: string;
  round: number;
  /** Waited before the run starts, to vary where it lands in the other process's run. */
  delayMs: number;
  hold: HoldPoint | null;
  /** Continue the thread (`invoke(null)`) instead of bringing a new user message. */
  continue?: boolean;
}

/** What one turn did, as seen by the process that ran it. */
export interface TurnOutcome {
  type: "turn";
  threadId: string;
  round: number;
  worker: string;
  /** The id of the user message this turn brought (`null` when it continued the thread). */
  inputId: string | null;
  /** `completed` when the run ended, `null` when it rejected. */
  status: string | null;
  /** The rejection's code, or `null`. */
  code: string | null;
  /** The rejection's message, or `null`. */
  message: string | null;
  /** Versions of the durable writes this run committed (its `state` events). */
  versions: number[];
  /** Ids of the messages this run committed: its input and every message of its steps. */
  committedIds: string[];
}

const { store: spec, logPath, worker, ...params } = workerParams<TurnWorkerParams>();
const { durableCheckpointEveryStep = true } = params;
let holdAt: HoldPoint | null = null;
const checkpointer = openStore(spec);
const app = agentGraph({
  checkpointer,
  tools: [
    effectTool({ name: "note_a", logPath, hold: () => holdIf("tool") }),
    effectTool({ name: "note_b", logPath }),
  ],
  turns: [
    [
      { name: "note_a", tag: worker },
      { name: "note_b", tag: worker },
    ],
  ],
  beforeReply: (answered) => (answered === 1 ? holdIf("reply") : Promise.resolve()),
});
// The file is opened before `ready`, so a round races turns, not connection setup.
await checkpointer.setup();
await report({ type: "ready" });
for (;;) {
  const command = await nextCommand("turn", "exit");
  if (command.type === "exit") break;
  const turn = command as unknown as TurnCommand;
  await sleep(turn.delayMs);
  holdAt = turn.hold;
  await report({ ...(await runTurn(turn)) });
}
await checkpointer.close();
process.exit(0);

/** Holds once at `point` if this turn asked for it: tells the parent, waits for `release`. */
async function holdIf(point: HoldPoint): Promise<void> {
  if (holdAt !== point) return;
  holdAt = null;
  await report({ type: "holding", at: point });
  await nextCommand("release");
}

async function runTurn(turn: TurnCommand): Promise<TurnOutcome> {
  const { threadId, round } = turn;
  const input = turn.continue ? null : Message.user(`round ${round} from ${worker}`);
  const outcome: TurnOutcome = {
    type: "turn",
    threadId,
    round,
    worker,
    inputId: input?.id ?? null,
    status: null,
    code: null,
    message: null,
    versions: [],
    committedIds: [],
  };
  try {
    const config = { threadId, durableCheckpointEveryStep };
    for await (const event of app.stream(input && { messages: [input] }, config)) {
      // The first durable write of a run commits its input; each step's messages are
      // announced only after the write that committed them.
      if (event.type === "state" && outcome.versions.length === 0 && input) {
        outcome.committedIds.push(input.id);
      }
      if (event.type === "state") outcome.versions.push(event.version);
      if (event.type === "message") outcome.committedIds.push(event.message.id);
      if (event.type === "run_end") outcome.status = event.status;
    }
  } catch (error) {
    outcome.code = isTenxgraphError(error) ? error.code : String(error);
    outcome.message = error instanceof Error ? error.message : String(error);
  }
  return outcome;
}
