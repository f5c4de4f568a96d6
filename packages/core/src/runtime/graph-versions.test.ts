import { describe, expect, it } from "vitest";
import { z } from "zod";
import { END } from "../definition/edges.js";
import type { GraphMigration } from "../definition/graph-migrations.js";
import type { BaseState } from "../definition/reducers.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { StateGraph } from "../graph/state-graph.js";
import { interrupt } from "../node/interrupt.js";
import { FAULT_POINTS } from "../node/fault-points.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { continuationRefusal } from "./thread-migration.js";
import { callsTurn, pause, settle, toolText } from "../support/helpers.js";
import { FaultPoints } from "../testing/fault-points.js";
import { recordingLogger } from "../testing/recording-logger.js";
import { ScriptedModel } from "../testing/scripted-model.js";
import { ToolNode } from "../tools/tool-node.js";
import { tool } from "../tools/tool.js";

const chargeArgs = z.object({ order_id: z.string(), amount_cents: z.number().int() });

/** A charge tool under `name`, logging each charge to `charges`. */
function chargeTool(
  name: string,
  charges: string[],
  options: { domainKey?: boolean; schema?: z.ZodType } = {},
) {
  return tool({
    name,
    description: "Charge the card.",
    schema: (options.schema ?? chargeArgs) as typeof chargeArgs,
    ...(options.domainKey
      ? { idempotencyKey: (args: z.infer<typeof chargeArgs>) => `order-${args.order_id}` }
      : {}),
    execute: (args: z.infer<typeof chargeArgs>) => {
      charges.push(`${name} ${args.order_id}`);
      return `Charged ${args.amount_cents}`;
    },
  });
}

/** The charge and a slower receipt, in one message: the charge is recorded while the receipt runs. */
const CALL = callsTurn("m-1", [
  ["charge_card", { order_id: "A1", amount_cents: 500 }],
  ["send_receipt", { order_id: "A1" }],
]);

const sendReceipt = tool({
  name: "send_receipt",
  description: "Email the receipt.",
  schema: z.object({ order_id: z.string() }),
  execute: async () => {
    await pause(20);
    return "Receipt sent";
  },
});

interface Version {
  checkpointer: InMemoryCheckpointer;
  toolName: string;
  charges: string[];
  version?: string;
  migrations?: GraphMigration[];
  /** Adds an AUDIT node between the tools and the model (a node v1 does not have). */
  audit?: boolean;
  domainKey?: boolean;
  schema?: z.ZodType;
  faults?: FaultPoints;
}

/** MAIN asks for one charge, TOOL runs it, MAIN answers; v2 may rename the tool and add AUDIT. */
function supportGraph(v: Version) {
  const graph = new StateGraph()
    .addNode("MAIN", new ScriptedModel([CALL, "Done."]))
    .addNode("TOOL", new ToolNode([chargeTool(v.toolName, v.charges, v), sendReceipt]))
    .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
    .setEntryPoint("MAIN");
  const withAudit = v.audit
    ? graph
        .addNode("AUDIT", () => ({ audited: true }))
        .addEdge("TOOL", "AUDIT")
        .addEdge("AUDIT", "MAIN")
    : graph.addEdge("TOOL", "MAIN");
  return withAudit.compile({
    checkpointer: v.checkpointer,
    // The receipt left in doubt by a crash is retried soon after.
    claimStaleAfterMs: 200,
    stopPollIntervalMs: 50,
    logger: recordingLogger(),
    ...(v.version === undefined ? {} : { version: v.version }),
    ...(v.migrations ? { migrations: v.migrations } : {}),
    ...(v.faults ? { faultPoints: v.faults } : {}),
  });
}

/**
 * Dies (throws) mid tool node: the charge is recorded in the ledger, the receipt has returned
 * but is not recorded (in doubt), the step is not written.
 */
function crashAfterRecord(): FaultPoints {
  return new FaultPoints().arm(
    FAULT_POINTS.TOOL_AFTER_RETURN,
    () => {
      throw new Error("process died");
    },
    { when: (at) => at.toolName === "send_receipt" },
  );
}

const user = { messages: [Message.user("Charge order A1")] };
const RENAME: GraphMigration = { from: "1", tools: { charge_card: "charge_payment" } };

describe("graph versions: the version on every checkpoint", () => {
  it("records the graph's fingerprint and version with each checkpoint; the same shape, the same fingerprint", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const app = supportGraph({ checkpointer, toolName: "charge_card", charges: [], version: "1" });
    await app.invoke(user, { threadId: "t" });
    const recorded = (await checkpointer.getCheckpoint("t"))!.graph;
    expect(recorded).toEqual(app.definition.version);
    expect(recorded).toMatchObject({
      version: "1",
      fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    for (const entry of await checkpointer.listVersions("t")) {
      expect((await checkpointer.getVersion("t", entry.version))!.graph).toEqual(recorded);
    }
    const again = supportGraph({ checkpointer, toolName: "charge_card", charges: [] });
    expect(again.definition.version).toEqual({ fingerprint: recorded!.fingerprint });
  });

  it("a renamed tool, a changed argument schema or a new node changes the fingerprint", () => {
    const base = { checkpointer: new InMemoryCheckpointer(), charges: [] };
    const fingerprint = (v: Partial<Version>) =>
      supportGraph({ ...base, toolName: "charge_card", ...v }).definition.version.fingerprint;
    const v1 = fingerprint({});
    expect(fingerprint({ toolName: "charge_payment" })).not.toBe(v1);
    expect(fingerprint({ schema: chargeArgs.extend({ currency: z.string() }) })).not.toBe(v1);
    expect(fingerprint({ audit: true })).not.toBe(v1);
    expect(fingerprint({ domainKey: true })).toBe(v1);
  });

  it("refuses a malformed version or migration with GRAPH_008", () => {
    const v = { checkpointer: new InMemoryCheckpointer(), toolName: "charge_payment", charges: [] };
    const cases: [Partial<Version>, string][] = [
      [{ version: "" }, "version must be a non-empty string"],
      [
        { migrations: [{ from: "1", tools: { charge_card: "refund" } }] },
        "which this graph has no tool named",
      ],
      [
        { migrations: [{ from: "1", nodes: { TOOLS: "TOOLZ" } }] },
        "which this graph has no node named",
      ],
      [{ migrations: [{ from: "1", nodes: { MAIN: "TOOL" } }] }, "is still a node of this graph"],
      [{ migrations: [RENAME, RENAME] }, "two migrations from '1'"],
      [{ migrations: [{ from: "" }] }, 'migrations[0]["from"]'],
    ];
    for (const [options, words] of cases) {
      const compile = () => supportGraph({ ...v, ...options } as Version);
      expect(compile).toThrow(words);
      try {
        compile();
      } catch (error) {
        expect(isTenxgraphError(error, "GRAPH_008")).toBe(true);
      }
    }
  });
});

describe("graph versions: continuing a thread under another version", () => {
  for (const domainKey of [false, true]) {
    it(`a crash mid tool node under v1, continued by v2 (tool renamed, node added): one charge${domainKey ? " (domain key)" : ""}`, async () => {
      const checkpointer = new InMemoryCheckpointer();
      const charges: string[] = [];
      const v1 = supportGraph({
        checkpointer,
        toolName: "charge_card",
        charges,
        version: "1",
        domainKey,
        faults: crashAfterRecord(),
      });
      expect((await settle(v1.invoke(user, { threadId: "t" }))).ok).toBe(false);
      expect(charges).toEqual(["charge_card A1"]);
      const before = await checkpointer.getCheckpoint("t");

      const v2 = supportGraph({
        checkpointer,
        toolName: "charge_payment",
        charges,
        version: "2",
        domainKey,
        audit: true,
        migrations: [RENAME],
      });
      const result = await v2.invoke(null, { threadId: "t" });
      expect(result.status).toBe("completed");
      expect(charges).toEqual(["charge_card A1"]);
      expect(toolText(result.state, "call_1")).toBe("Charged 500");
      expect(result.state).toMatchObject({ audited: true });
      const after = (await checkpointer.getCheckpoint("t"))!;
      expect(after.version).toBeGreaterThan(before!.version);
      expect(after.graph).toEqual(v2.definition.version);
    });
  }

  for (const domainKey of [false, true]) {
    it(`rolling deploy: a v1 call v2 recorded under the renamed tool is replayed by v1, never run again (${domainKey ? "domain key" : "message key"})`, async () => {
      const checkpointer = new InMemoryCheckpointer();
      const charges: string[] = [];
      const afterMain = new FaultPoints().arm(
        FAULT_POINTS.STEP_AFTER_WRITE,
        () => {
          throw new Error("process died");
        },
        { when: (at) => at.node === "MAIN" },
      );
      const v1 = (faults?: FaultPoints) =>
        supportGraph({
          checkpointer,
          toolName: "charge_card",
          charges,
          version: "1",
          domainKey,
          ...(faults ? { faults } : {}),
        });
      // v1's model asked for the charge; the worker died before the tool step.
      expect((await settle(v1(afterMain).invoke(user, { threadId: "t" }))).ok).toBe(false);
      // A v2 worker runs the call and records the charge, then dies before the step's write.
      const v2 = supportGraph({
        checkpointer,
        toolName: "charge_payment",
        charges,
        version: "2",
        domainKey,
        migrations: [RENAME],
        faults: crashAfterRecord(),
      });
      expect((await settle(v2.invoke(null, { threadId: "t" }))).ok).toBe(false);
      expect(charges).toEqual(["charge_payment A1"]);
      // The thread is still v1's: a v1 worker continues it and finds the charge its own.
      const result = await v1().invoke(null, { threadId: "t" });
      expect(result.status).toBe("completed");
      expect(charges).toEqual(["charge_payment A1"]);
      const keys = (await checkpointer.listCalls("t")).map((e) => [e.key, e.toolName]);
      const charge = domainKey ? "charge_card:order-A1" : "m-1:call_1";
      expect(keys).toContainEqual([charge, "charge_card"]);
    });
  }

  it("without the rename, v2 refuses with THREAD_007 naming the tool, and writes nothing; v1 still continues it", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const charges: string[] = [];
    const v1 = supportGraph({
      checkpointer,
      toolName: "charge_card",
      charges,
      version: "1",
      faults: crashAfterRecord(),
    });
    await settle(v1.invoke(user, { threadId: "t" }));
    const before = await checkpointer.getCheckpoint("t");

    const v2 = supportGraph({ checkpointer, toolName: "charge_payment", charges, version: "2" });
    const refused = await settle(v2.invoke(null, { threadId: "t" }));
    expect(refused.ok).toBe(false);
    const error = (refused as { error: Error }).error;
    expect(isTenxgraphError(error, "THREAD_007")).toBe(true);
    expect(error.message).toContain("tool 'charge_card' (pending call 'call_1' at node 'TOOL')");
    expect(error.message).toContain("version '1'");
    expect(await checkpointer.getCheckpoint("t")).toEqual(before);
    // A host asks first, reading the checkpoint itself or handing in the one it read.
    const asked = await continuationRefusal(v2.definition, checkpointer, "t");
    expect(asked?.code).toBe("THREAD_007");
    const handed = await continuationRefusal(v2.definition, checkpointer, "t", before);
    expect(handed?.message).toBe(asked?.message);
    // What it hands in is the thread as it knows it: absent, there is nothing to refuse.
    expect(await continuationRefusal(v2.definition, checkpointer, "t", null)).toBeNull();

    const again = supportGraph({ checkpointer, toolName: "charge_card", charges, version: "1" });
    expect((await again.invoke(null, { threadId: "t" })).status).toBe("completed");
    expect(charges).toEqual(["charge_card A1"]);
  });

  it("refuses a pending call whose recorded arguments the new schema rejects, and a next node that is gone", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const charges: string[] = [];
    const v1 = supportGraph({
      checkpointer,
      toolName: "charge_card",
      charges,
      faults: crashAfterRecord(),
    });
    await settle(v1.invoke(user, { threadId: "t" }));
    const stricter = chargeArgs.extend({ currency: z.string() });
    const v2 = supportGraph({ checkpointer, toolName: "charge_card", charges, schema: stricter });
    const refused = await settle(v2.invoke(null, { threadId: "t" }));
    expect((refused as { error: Error }).error.message).toContain(
      "arguments of pending call 'call_1' that tool 'charge_card' accepts",
    );
    const noTool = new StateGraph()
      .addNode("MAIN", new ScriptedModel(["Done."]))
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile({ checkpointer });
    const gone = await settle(noTool.invoke(null, { threadId: "t" }));
    expect(isTenxgraphError((gone as { error: Error }).error, "THREAD_007")).toBe(true);
    expect((gone as { error: Error }).error.message).toContain("no node 'TOOL'");
  });

  it("an interrupt paused under v1 is answered under v2, which renamed its node and migrates the state", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const review = (name: string) =>
      new StateGraph<BaseState & { amount?: number; approved?: boolean }>()
        .addNode(name, (state) => {
          const approved = interrupt({ amount: state.amount }, { message: "Approve?" });
          return { approved: approved === true };
        })
        .addEdge(name, END)
        .setEntryPoint(name);
    const v1 = review("REVIEW").compile({ checkpointer, version: "1" });
    const paused = await v1.invoke({ amount: 5 }, { threadId: "t" });
    expect(paused.status).toBe("interrupted");
    const [pending] = paused.interrupts;

    const v2 = review("APPROVE").compile({
      checkpointer,
      version: "2",
      migrations: [
        {
          from: "1",
          nodes: { REVIEW: "APPROVE" },
          state: (values) => ({ ...values, amount: (values.amount as number) * 100 }),
        },
      ],
    });
    const answered = await v2.invoke({ resume: true, interruptId: pending!.id }, { threadId: "t" });
    expect(answered.status).toBe("completed");
    expect(answered.state).toMatchObject({ approved: true, amount: 500 });
    expect((await checkpointer.getCheckpoint("t"))!.graph).toEqual({
      version: "2",
      fingerprint: v2.definition.version.fingerprint,
    });
  });

  it("a state migration that throws refuses with THREAD_007 and writes nothing", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const charges: string[] = [];
    const v1 = supportGraph({
      checkpointer,
      toolName: "charge_card",
      charges,
      version: "1",
      faults: crashAfterRecord(),
    });
    await settle(v1.invoke(user, { threadId: "t" }));
    const before = await checkpointer.getCheckpoint("t");
    const broken: GraphMigration = {
      ...RENAME,
      state: () => {
        throw new Error("no currency");
      },
    };
    const v2 = supportGraph({
      checkpointer,
      toolName: "charge_payment",
      charges,
      version: "2",
      migrations: [broken],
    });
    const refused = await settle(v2.invoke(null, { threadId: "t" }));
    expect((refused as { error: Error }).error.message).toContain(
      "the migration from '1' threw in state(): no currency",
    );
    expect(await checkpointer.getCheckpoint("t")).toEqual(before);
    expect(charges).toEqual(["charge_card A1"]);
  });
});
