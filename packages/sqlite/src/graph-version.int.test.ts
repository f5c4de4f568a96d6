import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { END, isTenxgraphError, Message, StateGraph, ToolNode, tool } from "@tenxgraph/core";
import { FAULT_POINTS, FaultPoints, recordingLogger } from "@tenxgraph/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { SqliteCheckpointer } from "./index.js";

const folder = join(tmpdir(), `tenxgraph-sqlite-versions-${randomUUID()}`);
const path = join(folder, "threads.db");
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/**
 * One charge (domain-keyed) and a slower receipt under `chargeName`; release 2 adds AUDIT and
 * may carry release 1's threads over. Each compile opens the file anew: another process.
 */
function release(
  chargeName: string,
  charges: string[],
  options: { v2?: boolean; migrate?: boolean; crash?: boolean } = {},
) {
  const charge = tool({
    name: chargeName,
    description: "Charge the card.",
    schema: z.object({ order_id: z.string() }),
    idempotencyKey: (args) => `order-${args.order_id}`,
    execute: (args) => {
      charges.push(`${chargeName} ${args.order_id}`);
      return "Charged";
    },
  });
  const receipt = tool({
    name: "send_receipt",
    description: "Email the receipt.",
    schema: z.object({ order_id: z.string() }),
    execute: async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return "Sent";
    },
  });
  const model = (state: { messages: Message[] }) =>
    state.messages.at(-1)?.role === "tool"
      ? Message.assistant("Done.")
      : Message.assistant("", [
          { id: "call_1", name: chargeName, arguments: '{"order_id":"A1"}' },
          { id: "call_2", name: "send_receipt", arguments: '{"order_id":"A1"}' },
        ]);
  const graph = new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode([charge, receipt]))
    .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
    .setEntryPoint("MAIN");
  const shaped = options.v2
    ? graph
        .addNode("AUDIT", () => ({ audited: true }))
        .addEdge("TOOL", "AUDIT")
        .addEdge("AUDIT", "MAIN")
    : graph.addEdge("TOOL", "MAIN");
  const faults = new FaultPoints().arm(
    FAULT_POINTS.TOOL_AFTER_RETURN,
    () => {
      throw new Error("process died");
    },
    { when: (at) => options.crash === true && at.toolName === "send_receipt" },
  );
  return shaped.compile({
    checkpointer: new SqliteCheckpointer({ path }),
    version: options.v2 ? "2" : "1",
    migrations: options.migrate ? [{ from: "1", tools: { charge_card: "charge_payment" } }] : [],
    faultPoints: faults,
    claimStaleAfterMs: 200,
    stopPollIntervalMs: 50,
    logger: recordingLogger(),
  });
}

describe("graph versions on SQLite", () => {
  it("keeps the version with each checkpoint; a crash under 1 is refused by an unmigrated 2 and finished by a migrated 2, charged once", async () => {
    const charges: string[] = [];
    const v1 = release("charge_card", charges, { crash: true });
    await expect(
      v1.invoke({ messages: [Message.user("charge A1")] }, { threadId: "t" }),
    ).rejects.toThrow("process died");
    const before = await v1.checkpointer.getCheckpoint("t");
    expect(before?.graph).toEqual(v1.definition.version);

    const unmigrated = release("charge_payment", charges, { v2: true });
    const refused = await unmigrated
      .invoke(null, { threadId: "t" })
      .catch((error: unknown) => error);
    expect(isTenxgraphError(refused, "THREAD_007")).toBe(true);
    expect(await unmigrated.checkpointer.getCheckpoint("t")).toEqual(before);

    const v2 = release("charge_payment", charges, { v2: true, migrate: true });
    const result = await v2.invoke(null, { threadId: "t" });
    expect(result.status).toBe("completed");
    expect(result.state).toMatchObject({ audited: true });
    expect(charges).toEqual(["charge_card A1"]);
    expect((await v2.checkpointer.getCheckpoint("t"))?.graph).toEqual({
      fingerprint: v2.definition.version.fingerprint,
      version: "2",
    });
    await Promise.all(
      [v1, unmigrated, v2].map((app) => (app.checkpointer as SqliteCheckpointer).close()),
    );
  });
});
