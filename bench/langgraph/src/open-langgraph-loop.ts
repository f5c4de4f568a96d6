import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { Loop, StoreSpec } from "../../src/loop.js";
import type { Workload } from "../../src/workload.js";
import { buildLangGraphApp, runLangGraphOnce } from "./langgraph-loop.js";

/**
 * LangGraph.js's ReAct loop on the store `spec` names, each saver constructed as its docs show
 * a user: `new MemorySaver()`, `SqliteSaver.fromConnString(path)` (its own pragmas: WAL, and
 * the driver's default synchronous under WAL), `PostgresSaver.fromConnString(dsn, { schema })`
 * then `setup()` (default pool). LangGraph has no Redis saver here: `withRedis` is refused.
 */
export async function openLangGraphLoop(workload: Workload, spec: StoreSpec): Promise<Loop> {
  const { saver, close } = await openSaver(spec);
  const app = buildLangGraphApp(workload, saver);
  return {
    runtime: "langgraph",
    run: (threadId) => runLangGraphOnce(app, workload, threadId),
    ...(saver instanceof SqliteSaver
      ? { connectionSettings: () => sqliteSettings(saver), sqliteConnection: () => saver.db }
      : {}),
    close,
  };
}

/** PRAGMA synchronous's numbers by name. */
const SYNCHRONOUS = ["OFF", "NORMAL", "FULL", "EXTRA"];

/** The pragmas SqliteSaver's connection runs with (it sets journal_mode itself on first use). */
function sqliteSettings(saver: SqliteSaver): Record<string, string> {
  const pragma = (name: string) => String(saver.db.pragma(name, { simple: true }));
  return {
    journal_mode: pragma("journal_mode"),
    synchronous: SYNCHRONOUS[Number(pragma("synchronous"))] ?? pragma("synchronous"),
  };
}

async function openSaver(
  spec: StoreSpec,
): Promise<{ saver: BaseCheckpointSaver; close: () => Promise<void> }> {
  switch (spec.kind) {
    case "memory":
      return { saver: new MemorySaver(), close: async () => {} };
    case "sqlite": {
      const saver = SqliteSaver.fromConnString(spec.path);
      return { saver, close: async () => void saver.db.close() };
    }
    case "postgres": {
      if (spec.withRedis) throw new Error("LangGraph.js has no PostgreSQL + Redis saver here");
      const saver = PostgresSaver.fromConnString(spec.servers.postgresDsn, {
        schema: spec.schema,
      });
      await saver.setup();
      return { saver, close: () => saver.end() };
    }
  }
}
