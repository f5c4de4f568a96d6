import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import {
  END,
  InMemoryCheckpointer,
  Message,
  Send,
  StateGraph,
  ToolNode,
  silentLogger,
  tool,
  type BaseState,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { z } from "zod";

/**
 * `npm run bench:fan-out`: how many store commits a durable step of a 4-way
 * `Send` fan-out costs. Each turn a scripted model asks for one call, and four `Send` branches
 * run it through a `ToolNode`, each in its own ledger namespace: four ledger claims ride in the
 * model step's write and four results in the fan-out step's write, so the figure to look for is
 * one commit per step, not one per branch. Prints the counts per store; no assertions.
 */
const TURNS = 50;
const BRANCHES = 4;

interface Fan extends BaseState {
  shard?: number;
}

const COMMITS = new Set([
  "putCheckpoint",
  "commitStep",
  "claimCalls",
  "completeCall",
  "releaseCall",
]);

/** Counts the store's writes by method. */
function countWrites(inner: Checkpointer): { store: Checkpointer; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return (...args: unknown[]) => {
        if (COMMITS.has(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, counts };
}

function fanOutGraph(checkpointer: Checkpointer) {
  const work = tool({
    name: "work",
    description: "One shard's work",
    schema: z.object({}),
    execute: async (_args, ctx) => `shard ${(ctx.state as Fan).shard} done`,
  });
  let turn = 0;
  return new StateGraph<Fan>()
    .addNode("MODEL", () => {
      turn += 1;
      if (turn > TURNS) return Message.assistant("done");
      return Message.assistant("", [{ id: "call_1", name: "work", arguments: "{}" }]);
    })
    .addNode("WORK", new ToolNode<Fan>([work]))
    .addConditionalEdges("MODEL", (state) =>
      state.messages.at(-1)?.role === "assistant" && turn <= TURNS
        ? Array.from({ length: BRANCHES }, (_, shard) => new Send("WORK", { shard }))
        : END,
    )
    .addEdge("WORK", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ checkpointer, logger: silentLogger });
}

async function measure(name: string, inner: Checkpointer): Promise<void> {
  const { store, counts } = countWrites(inner);
  const app = fanOutGraph(store);
  const started = performance.now();
  const result = await app.invoke(
    { messages: [Message.user("go")] },
    { threadId: "fan-out", recursionLimit: 2 * TURNS + 5 },
  );
  const ms = performance.now() - started;
  const commits = [...counts.values()].reduce((sum, n) => sum + n, 0);
  const ledger = await app.getToolLedger({ threadId: "fan-out" });
  // The start write is a commit but no step.
  const perStep = (commits - 1) / result.step;
  console.log(
    `${name}: ${result.step} durable steps (${TURNS} turns of a ${BRANCHES}-way Send fan-out), ` +
      `${ledger.length} ledgered calls, ${commits} commits ` +
      `(${[...counts].map(([method, n]) => `${method} ${n}`).join(", ")}): ` +
      `${perStep.toFixed(2)} commits per step, ${(ms / result.step).toFixed(2)} ms per step`,
  );
}

await measure("in memory", new InMemoryCheckpointer());
const dir = mkdtempSync(join(os.tmpdir(), "tenxgraph-fan-out-"));
const sqlite = new SqliteCheckpointer({ path: join(dir, "fan-out.db") });
try {
  await measure("SQLite", sqlite);
} finally {
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });
}
