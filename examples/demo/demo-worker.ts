import type { Logger, StreamEvent } from "@tenxgraph/core";
import { FaultPoints } from "@tenxgraph/core/testing";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { DEMO_INPUT, DEMO_RUN_CONFIG, buildSupportAgent } from "./support-agent-app.js";

/** What the demo's parent tells a worker: where the store is, and whether to die mid node. */
export interface DemoWorkerParams {
  path: string;
  outsideWorldLog: string;
  mode: "start" | "continue";
  killAfterChargeRecorded: boolean;
}

/** What a worker tells the parent, over IPC. */
export type DemoWorkerMessage =
  | { type: "event"; event: StreamEvent }
  | { type: "in_doubt"; tool: string; attempt: number }
  | { type: "dying" };

const params = JSON.parse(process.argv[2] ?? "{}") as DemoWorkerParams;
const send = (message: DemoWorkerMessage) =>
  new Promise<void>((resolve) => process.send!(message, () => resolve()));

// The worker is killed with SIGKILL right after charge_card's result is recorded in the ledger,
// while send_receipt is still talking to the mailer: the timeline the README shows.
const faults = new FaultPoints();
if (params.killAfterChargeRecorded) {
  faults.arm(
    "ledger.after_record",
    async () => {
      // Give the stream a moment to hand the parent the timeline so far, then die the way a
      // crashed machine does: no cleanup, no final write.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await send({ type: "dying" });
      process.kill(process.pid, "SIGKILL");
    },
    { when: (at) => at.toolName === "charge_card", times: 1 },
  );
}

// The runtime reports an in-doubt call on its logger; the demo passes that on to the parent.
const logger: Logger = {
  debug() {},
  info() {},
  error() {},
  warn(fields: { tool?: string; attempt?: number }, message?: string) {
    if (message?.includes("IN DOUBT") && fields.tool) {
      void send({ type: "in_doubt", tool: fields.tool, attempt: fields.attempt ?? 0 });
    }
  },
};

const checkpointer = new SqliteCheckpointer({ path: params.path });
const app = buildSupportAgent({
  checkpointer,
  outsideWorldLog: params.outsideWorldLog,
  faultPoints: faults,
  logger,
});
const input = params.mode === "start" ? DEMO_INPUT : null;
for await (const event of app.stream(input, DEMO_RUN_CONFIG)) await send({ type: "event", event });
await checkpointer.close();
process.disconnect();
