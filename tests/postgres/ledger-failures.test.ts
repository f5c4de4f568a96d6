/**
 * The ledger itself failing on a real PostgreSQL (SPEC 4.3): a completion that cannot be
 * recorded after the tool returned is logged at error level and counted, and the run goes on; a
 * ledger read that throws is treated as "no record", and the claim still keeps a recorded call
 * from running twice.
 */
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Message } from "@tenxgraph/core";
import {
  StorageError,
  type AttemptRef,
  type ClaimResult,
  type LedgerClaim,
  type LedgerEntry,
} from "@tenxgraph/core/storage";
import { FaultPoints, recordingLogger, type RecordingLogger } from "@tenxgraph/core/testing";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { agentGraph } from "../concurrency/support/agent-graph.js";
import { startsByKey } from "../concurrency/support/effect-log.js";
import { effectTool } from "../concurrency/support/effect-tool.js";
import { dropStore } from "../support/fresh-store.js";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { freshSchema } from "../../packages/postgres/src/support/pg-store.js";
import { globalCounters } from "./support/global-meter.js";

const counters = globalCounters();
const dsn = testPostgresDsn();
const schema = freshSchema("ledger_failures");
const logPath = join(tmpdir(), `tenxgraph-ledger-failures-${randomUUID()}.jsonl`);

/**
 * The real store, with ledger calls that throw on demand as a broken connection would: the
 * failures are injected at the `Checkpointer` boundary the runtime sees, and everything else is
 * PostgreSQL's.
 */
class FailingLedger extends PgCheckpointer {
  /** Completions of calls whose key matches throw. */
  failCompletionOf: (key: string) => boolean = () => false;
  /** The next this many `getCalls` throw. */
  failingReads = 0;
  /** The next this many `claimCalls` throw (a node reads the ledger only when its claim failed). */
  failingClaims = 0;

  override async claimCalls(threadId: string, claims: LedgerClaim[]): Promise<ClaimResult[]> {
    if (this.failingClaims > 0) {
      this.failingClaims -= 1;
      throw new StorageError("claimCalls", new Error("connection terminated unexpectedly"));
    }
    return super.claimCalls(threadId, claims);
  }

  override async completeCall(threadId: string, attempt: AttemptRef, result: unknown) {
    if (this.failCompletionOf(attempt.key)) {
      throw new StorageError("completeCall", new Error("connection terminated unexpectedly"));
    }
    return super.completeCall(threadId, attempt, result);
  }

  override async getCalls(threadId: string, keys: string[]): Promise<LedgerEntry[]> {
    if (this.failingReads > 0) {
      this.failingReads -= 1;
      throw new StorageError("getCalls", new Error("connection terminated unexpectedly"));
    }
    return super.getCalls(threadId, keys);
  }
}

let logger: RecordingLogger;
let store: FailingLedger;

beforeEach(async () => {
  await store?.close();
  logger = recordingLogger();
  store = new FailingLedger({ postgresDsn: dsn, schema, logger });
});

afterAll(async () => {
  await store?.close();
  await dropStore({ kind: "postgres", dsn, schema });
  rmSync(logPath, { force: true });
});

/**
 * `store` as a store without `commitStep` (ledger protocol v1): every result is recorded on its
 * own, through the `completeCall` this file makes fail. (With v2, calls that return together
 * ride in the step's write instead.)
 */
function withoutStepWrites(checkpointer: FailingLedger): FailingLedger {
  return new Proxy(checkpointer, {
    get(target, property) {
      if (property === "commitStep") return undefined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
}

/** One model turn asking for note_a (`call_1`) and note_b (`call_2`), then a text answer. */
function app(faultPoints?: FaultPoints, checkpointer: FailingLedger = store) {
  return agentGraph({
    checkpointer,
    tools: [effectTool({ name: "note_a", logPath }), effectTool({ name: "note_b", logPath })],
    turns: [
      [
        { name: "note_a", tag: "ledger" },
        { name: "note_b", tag: "ledger" },
      ],
    ],
    compile: { logger, faultPoints },
  });
}

function ledgerByTool(ledger: LedgerEntry[]): Record<string, [string, number]> {
  return Object.fromEntries(ledger.map((entry) => [entry.toolName, [entry.status, entry.attempt]]));
}

describe("a completion that cannot be recorded after the tool returned", () => {
  it("is logged at error level with thread, key and tool, counted, and the run goes on", async () => {
    const threadId = "unrecorded";
    const failuresBefore = await counters.sum("tenxgraph.tool.ledger_record_failures", {
      tool: "note_a",
    });
    store.failCompletionOf = (key) => key.endsWith(":call_1");

    const result = await app(undefined, withoutStepWrites(store)).invoke(
      { messages: [Message.user("note")] },
      { threadId },
    );

    expect(result.status).toBe("completed");
    const roles = result.state.messages.map((message) => message.role);
    expect(roles).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
    // The model got note_a's result although the ledger did not.
    expect(Message.text(result.state.messages[2]!)).toBe("note_a ledger done");
    const records = logger.find("error", "COMPLETED but could not be recorded");
    expect(records).toHaveLength(1);
    const key = `${result.state.messages[1]!.id}:call_1`;
    expect(records[0]!.fields).toMatchObject({ threadId, key, tool: "note_a" });
    expect(records[0]!.message).toContain("a replay of this node may execute it again");
    expect(await counters.sum("tenxgraph.tool.ledger_record_failures", { tool: "note_a" })).toBe(
      failuresBefore + 1,
    );
    expect(ledgerByTool(await store.listCalls(threadId))).toEqual({
      note_a: ["started", 1],
      note_b: ["completed", 1],
    });
    expect([...startsByKey(logPath, threadId).values()]).toEqual([1, 1]);
  });
});

describe("a ledger read that throws", () => {
  it("on a replay whose first claim failed: treated as no record, yet the next claim finds both results and neither tool runs again", async () => {
    const threadId = "unread";
    // The tool step's write fails once, after both calls were recorded: the thread stays at TOOL.
    const faults = new FaultPoints().arm(
      "step.before_write",
      () => {
        throw new StorageError("putCheckpoint", new Error("connection terminated unexpectedly"));
      },
      { when: thirdWrite(), times: 1 },
    );
    const graph = app(faults);
    const first = graph.invoke({ messages: [Message.user("note")] }, { threadId });
    await expect(first).rejects.toMatchObject({ code: "STORAGE_FAILURE_001" });

    // The node's first claim fails, so it reads the ledger, and that read fails too.
    store.failingClaims = 1;
    store.failingReads = 1;
    const result = await graph.invoke(null, { threadId });

    expect(result.status).toBe("completed");
    expect([store.failingClaims, store.failingReads]).toEqual([0, 0]);
    expect(logger.find("error", "Tool ledger read failed")).toHaveLength(1);
    expect([...startsByKey(logPath, threadId).values()]).toEqual([1, 1]);
    expect(ledgerByTool(await store.listCalls(threadId))).toEqual({
      note_a: ["completed", 1],
      note_b: ["completed", 1],
    });
  });
});

/** True at the third durable write of a run: after the start write and the model's step, the tool step's. */
function thirdWrite(): () => boolean {
  let writes = 0;
  return () => ++writes === 3;
}
