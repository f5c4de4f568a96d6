import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  END,
  InMemoryCheckpointer,
  Message,
  StateGraph,
  silentLogger,
  type BaseState,
  type CompiledGraph,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { serve, type RunningServer } from "@tenxgraph/server";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";

/** The stores the HTTP bench runs on. */
export type HttpStore = "memory" | "sqlite";

/** A one-step graph behind a real server on 127.0.0.1, and the same graph for in-process calls. */
export interface OneStepServer {
  graph: CompiledGraph<BaseState & Record<string, unknown>>;
  server: RunningServer;
  close(): Promise<void>;
}

/**
 * One node that answers at once, then END: a run is one step and one durable write, so what
 * HTTP adds stands out. The server (`serve()`, no auth) runs in this process and serves this
 * very graph instance, so both paths share the store, its connection and its caches.
 */
export async function startOneStepServer(store: HttpStore): Promise<OneStepServer> {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-bench-http-"));
  const checkpointer: Checkpointer =
    store === "memory"
      ? new InMemoryCheckpointer()
      : new SqliteCheckpointer({ path: join(dir, "threads.db") });
  const graph = new StateGraph()
    .addNode("MAIN", () => Message.assistant("ok"))
    .addEdge("MAIN", END)
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
  const server = await serve({ graph, host: "127.0.0.1", port: 0, logger: silentLogger });
  return {
    graph,
    server,
    async close() {
      await server.close();
      await checkpointer.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
