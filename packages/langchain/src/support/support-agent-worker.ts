/**
 * A worker process for the crash test: runs the support agent on a LangChain chat model and
 * SQLite, and SIGKILLs itself right after charge_card's result is recorded, mid tool node.
 * Side effects go to an append-only file the test reads.
 */
import { appendFileSync } from "node:fs";
import { Message, silentLogger } from "@tenxgraph/core";
import { FaultPoints } from "@tenxgraph/core/testing";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import {
  SUPPORT_REQUEST,
  SUPPORT_THREAD,
  supportAgent,
  supportChatModel,
} from "./support-agent.js";

const params = JSON.parse(process.env.TENXGRAPH_WORKER_PARAMS ?? "{}") as {
  dbPath: string;
  outsideLog: string;
};
const faults = new FaultPoints().arm(
  "ledger.after_record",
  () => {
    process.kill(process.pid, "SIGKILL");
  },
  { when: (at) => at.toolName === "charge_card" },
);
const app = supportAgent({
  chatModel: supportChatModel(),
  checkpointer: new SqliteCheckpointer({ path: params.dbPath }),
  outside: (line) => appendFileSync(params.outsideLog, `${line}\n`),
  faultPoints: faults,
  logger: silentLogger,
});
await app.invoke({ messages: [Message.user(SUPPORT_REQUEST)] }, { threadId: SUPPORT_THREAD });
// Reaching this line means the fault point never fired: the test sees a clean exit and fails.
process.exit(0);
