import { z } from "zod";
import {
  END,
  InMemoryCheckpointer,
  Message,
  StateGraph,
  ToolNode,
  tool,
  silentLogger,
} from "@tenxgraph/core";
import type { Tracer } from "@opentelemetry/api";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { ScriptedModel } from "@tenxgraph/core/testing";
import { stepsPerRun, type Workload } from "../workload.js";

const echo = tool({
  name: "echo",
  description: "Returns its input.",
  schema: z.object({ n: z.number() }),
  execute: async (args) => `echo ${args.n}`,
});

/**
 * The ReAct graph of `workload` (a scripted model and a tool node) compiled on `checkpointer`,
 * so the in-memory and SQLite figures come from one and the same loop.
 */
export function buildApp(
  workload: Workload,
  checkpointer: Checkpointer = new InMemoryCheckpointer(),
  /** Default: the global tracer, which records nothing while no SDK is registered. */
  tracer?: Tracer,
) {
  const turns = Array.from({ length: workload.turns }, (_, turn) => ({
    toolCalls: Array.from({ length: workload.toolsPerTurn }, (_, i) => ({
      name: "echo",
      args: { n: turn * 10 + i },
    })),
  }));
  const model = new ScriptedModel([...turns, "done"]);
  return new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode([echo]))
    .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger, ...(tracer ? { tracing: { tracer } } : {}) });
}

/** Runs one whole loop on a fresh thread; returns node steps taken and elapsed ms. */
export async function runOnce(
  app: ReturnType<typeof buildApp>,
  workload: Workload,
  threadId: string,
): Promise<{ steps: number; ms: number }> {
  const started = performance.now();
  const result = await app.invoke(
    { messages: [Message.user("go")] },
    { threadId, recursionLimit: workload.turns * 2 + 5 },
  );
  const ms = performance.now() - started;
  if (result.status !== "completed") throw new Error(`run ended ${result.status}`);
  return { steps: stepsPerRun(workload), ms };
}
