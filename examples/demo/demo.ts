/**
 * `npm run demo`: the support agent on SQLite. Worker 1 starts the turn and is killed
 * with SIGKILL mid tool node; worker 2, a fresh process, continues the thread. Prints the
 * timeline, the ledger, and what reached the outside world: the card is charged once.
 */
import { fork } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Message } from "@tenxgraph/core";
import type { StreamEvent } from "@tenxgraph/core";
import { DEFAULT_SQLITE_PATH, SqliteCheckpointer } from "@tenxgraph/sqlite";
import type { DemoWorkerMessage, DemoWorkerParams } from "./demo-worker.js";
import { DEMO_THREAD_ID } from "./support-agent-app.js";

const path = DEFAULT_SQLITE_PATH;
const outsideWorldLog = join(dirname(path), "demo-outside-world.log");
const started = Date.now();
const say = (line: string) =>
  console.log(`  +${String(Date.now() - started).padStart(5)} ms  ${line}`);

async function main(): Promise<number> {
  await resetDemoThread();
  console.log(`tenxgraph demo: a support agent on SQLite (${path}), thread ${DEMO_THREAD_ID}\n`);
  const first = await runWorker(1, { mode: "start", killAfterChargeRecorded: true });
  if (first.signal !== "SIGKILL")
    return fail(`worker 1 was meant to be killed, but ended ${JSON.stringify(first)}`);
  const second = await runWorker(2, { mode: "continue", killAfterChargeRecorded: false });
  if (second.code !== 0) return fail(`worker 2 ended ${JSON.stringify(second)}`);
  await printLedger();
  return printOutsideWorld();
}

/** Starts from a clean thread and outside-world log, so the demo can run again and again. */
async function resetDemoThread(): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  rmSync(outsideWorldLog, { force: true });
  const checkpointer = new SqliteCheckpointer({ path });
  await checkpointer.deleteThread(DEMO_THREAD_ID);
  await checkpointer.close();
}

function runWorker(
  number: number,
  options: Pick<DemoWorkerParams, "mode" | "killAfterChargeRecorded">,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const params: DemoWorkerParams = { path, outsideWorldLog, ...options };
  const script = fileURLToPath(new URL("./demo-worker.ts", import.meta.url));
  const child = fork(script, [JSON.stringify(params)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const verb = options.mode === "start" ? "starts the turn" : "continues the thread";
  console.log(`worker ${number} (pid ${child.pid}) ${verb}`);
  child.on("message", (message) => narrate(message as DemoWorkerMessage));
  return new Promise((resolve) => {
    // "close", not "exit": every message the worker sent before dying has been read by then.
    child.on("close", (code, signal) => {
      if (signal === "SIGKILL")
        say(`worker ${number} killed with SIGKILL (send_receipt was still running)\n`);
      resolve({ code, signal });
    });
  });
}

function narrate(message: DemoWorkerMessage): void {
  if (message.type === "dying")
    return say(
      "charge_card ran and its result is recorded in the ledger; the worker is killed now",
    );
  if (message.type === "in_doubt") {
    return say(
      `${message.tool}: IN DOUBT (attempt ${message.attempt} was claimed by the dead worker and never ` +
        `recorded); its policy is "retry", so it runs again`,
    );
  }
  const line = describeEvent(message.event);
  if (line) say(line);
}

function describeEvent(event: StreamEvent): string | undefined {
  switch (event.type) {
    case "run_start":
      return `run ${event.runId.slice(-8)} starts (${event.mode})`;
    case "message": {
      const calls = event.message.toolCalls?.map((call) => call.name).join(", ");
      if (calls) return `model asks for ${calls}`;
      return event.message.role === "assistant"
        ? `model: "${Message.text(event.message)}"`
        : undefined;
    }
    case "tool_result": {
      const how = event.replayed ? "replayed from the ledger, not run" : "ran";
      return `${event.toolName.padEnd(12)} ${how}: ${Message.text(event.message)}`;
    }
    case "run_end":
      return `run ends: ${event.status} at version ${event.version}\n`;
    default:
      return undefined;
  }
}

async function printLedger(): Promise<void> {
  const checkpointer = new SqliteCheckpointer({ path });
  console.log("ledger (tool_executions):");
  for (const entry of await checkpointer.listCalls(DEMO_THREAD_ID)) {
    console.log(
      `  ${entry.toolName.padEnd(12)} ${entry.status.padEnd(9)} attempt ${entry.attempt}  ${entry.key}`,
    );
  }
  await checkpointer.close();
}

function printOutsideWorld(): number {
  const lines = readFileSync(outsideWorldLog, "utf8").trim().split("\n");
  console.log(`\noutside world (${outsideWorldLog}):`);
  for (const line of lines) console.log(`  ${line}`);
  const charges = lines.filter((line) => line.includes("charged order 4821")).length;
  if (charges !== 1) return fail(`the card was charged ${charges} times`);
  console.log("\nCharged once, though the worker died mid tool node.");
  return 0;
}

function fail(why: string): number {
  console.error(`demo failed: ${why}`);
  return 1;
}

process.exitCode = await main();
