/**
 * One workload of `npm run bench:compare`, in a process of its own, on the packages of the tree
 * this file sits in. The compare script copies this very file into the base tree, so both sides
 * run the same workload code against their own `@tenxgraph/*` builds. Keep it on the packages'
 * long-standing public API only (it must also run against older baselines) and import nothing
 * from the bench.
 *
 * Usage: `node --import tsx child.ts '<ChildSpec as JSON>'`; prints one JSON line (ChildResult).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  END,
  InMemoryCheckpointer,
  Message,
  StateGraph,
  ToolNode,
  silentLogger,
  tool,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { ScriptedModel } from "@tenxgraph/core/testing";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { serve } from "@tenxgraph/server";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";

/** What one child measures. */
export interface ChildSpec {
  store: "memory" | "sqlite" | "postgres" | "http";
  turns: number;
  toolsPerTurn: number;
  /**
   * Untimed node steps first (whole runs, at least one): connections, caches, and above all the
   * JIT. V8 keeps compiling the engine's code on its background threads for thousands of steps;
   * timed any earlier, the compiling is most of the CPU a child measures, and it varies from
   * child to child far more than the engine's own work does.
   */
  warmupSteps: number;
  /** Timed runs. */
  runs: number;
  /** PostgreSQL server, and a schema no other child uses (store "postgres" only). */
  postgresDsn?: string;
  schema?: string;
}

/** Totals over the timed runs. CPU is this process's user + system time. */
export interface ChildResult {
  steps: number;
  cpuMs: number;
  /** Of `cpuMs`, the main thread's (the rest is V8's compiler and GC helpers); Linux only. */
  mainThreadCpuMs?: number;
  wallMs: number;
}

/** The main thread's CPU time in ms, from the scheduler's nanosecond count; Linux only. */
function mainThreadCpuMs(): number | undefined {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/** Runs one whole invocation on a fresh thread and returns the node steps it took. */
type RunOnce = (threadId: string) => Promise<number>;

const echo = tool({
  name: "echo",
  description: "Returns its input.",
  schema: z.object({ n: z.number() }),
  execute: async (args) => `echo ${args.n}`,
});

/** The bench's ReAct loop: a scripted model and a tool node, `turns` turns of trivial tools. */
function reactLoop(spec: ChildSpec, checkpointer: Checkpointer): RunOnce {
  const turns = Array.from({ length: spec.turns }, (_, turn) => ({
    toolCalls: Array.from({ length: spec.toolsPerTurn }, (_, i) => ({
      name: "echo",
      args: { n: turn * 10 + i },
    })),
  }));
  const app = new StateGraph()
    .addNode("MAIN", new ScriptedModel([...turns, "done"]))
    .addNode("TOOL", new ToolNode([echo]))
    .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
  return async (threadId) => {
    const result = await app.invoke(
      { messages: [Message.user("go")] },
      { threadId, recursionLimit: spec.turns * 2 + 5 },
    );
    if (result.status !== "completed") throw new Error(`run ended ${result.status}`);
    return spec.turns * 2 + 1;
  };
}

/** A one-step graph behind `serve()` on 127.0.0.1, invoked by POST from this same process. */
async function httpInvoke(): Promise<{ run: RunOnce; close: () => Promise<void> }> {
  const graph = new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer: new InMemoryCheckpointer(), logger: silentLogger });
  const server = await serve({ graph, host: "127.0.0.1", port: 0, logger: silentLogger });
  const run: RunOnce = async (threadId) => {
    const response = await fetch(`${server.url}/v1/graph/invoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        messages: [{ role: "user", content: "hi" }],
        config: { thread_id: threadId },
      }),
    });
    const body = (await response.json()) as { data?: { meta?: { status?: string } } };
    if (body.data?.meta?.status !== "completed") throw new Error(`HTTP run ${response.status}`);
    return 1;
  };
  return { run, close: () => server.close() };
}

/** The workload's run function and how to release what it opened. */
async function open(spec: ChildSpec): Promise<{ run: RunOnce; close: () => Promise<void> }> {
  if (spec.store === "http") return httpInvoke();
  if (spec.store === "memory") {
    return { run: reactLoop(spec, new InMemoryCheckpointer()), close: async () => {} };
  }
  if (spec.store === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "tenxgraph-compare-"));
    const checkpointer = new SqliteCheckpointer({
      path: join(dir, "threads.db"),
      synchronous: "FULL",
    });
    return {
      run: reactLoop(spec, checkpointer),
      close: async () => {
        await checkpointer.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (!spec.postgresDsn || !spec.schema) throw new Error("postgres needs postgresDsn and schema");
  const checkpointer = new PgCheckpointer({
    postgresDsn: spec.postgresDsn,
    schema: spec.schema,
    logger: silentLogger,
  });
  await checkpointer.setup();
  return { run: reactLoop(spec, checkpointer), close: () => checkpointer.close() };
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? "") as ChildSpec;
  const { run, close } = await open(spec);
  try {
    for (let i = 0, warm = 0; warm < spec.warmupSteps; i++) warm += await run(`warm-${i}`);
    let steps = 0;
    const cpuBefore = process.cpuUsage();
    const mainBefore = mainThreadCpuMs();
    const started = performance.now();
    for (let i = 0; i < spec.runs; i++) steps += await run(`timed-${i}`);
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const mainAfter = mainThreadCpuMs();
    const result: ChildResult = { steps, cpuMs: (cpu.user + cpu.system) / 1000, wallMs };
    if (mainBefore !== undefined && mainAfter !== undefined) {
      result.mainThreadCpuMs = mainAfter - mainBefore;
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await close();
  }
}

await main();
