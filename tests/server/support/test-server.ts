import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseState, CompiledGraph } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import { serve, type AppOptions, type RunningServer } from "@tenxgraph/server";
import { readEffects } from "../../support/effect-log.js";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore, type StoreKind, type StoreSpec } from "../../support/store-spec.js";
import { TEST_JWT_SECRET } from "./http.js";
import { buildTestGraph, type Effect, type TestGraphParams } from "./test-graph.js";

/** A server on 127.0.0.1 (free port) over a fresh store, with what a test inspects. */
export interface TestServer {
  base: string;
  spec: StoreSpec;
  dir: string;
  checkpointer: Checkpointer;
  graph: CompiledGraph<BaseState>;
  server: RunningServer;
  effectLog: string;
  effects(): Effect[];
  /** Charges and receipts that really happened, by line. */
  count(pattern: RegExp): number;
  close(): Promise<void>;
}

/** Options of {@link startTestServer}. */
export interface TestServerOptions extends Omit<TestGraphParams, "effectLog"> {
  /** Default: JWT with {@link TEST_JWT_SECRET}. */
  auth?: AppOptions["auth"];
  /** A graph of the test's own on the store (default: the support agent). */
  build?: (
    checkpointer: Checkpointer,
    effectLog: string,
    spec: StoreSpec,
  ) => CompiledGraph<BaseState>;
  app?: Partial<AppOptions>;
}

/** Starts a server for `kind` (SQLite file or PostgreSQL schema + Redis). */
export async function startTestServer(
  kind: StoreKind,
  name: string,
  options: TestServerOptions = {},
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-server-"));
  const spec = freshStore(kind, name, dir);
  const checkpointer = openStore(spec);
  const effectLog = join(dir, "effects.jsonl");
  const graph = options.build
    ? options.build(checkpointer, effectLog, spec)
    : (buildTestGraph(
        { ...options, effectLog },
        checkpointer,
      ) as unknown as CompiledGraph<BaseState>);
  const auth =
    options.auth === undefined ? { method: "jwt" as const, secret: TEST_JWT_SECRET } : options.auth;
  const server = await serve({ graph, auth, port: 0, ...options.app });
  const effects = () => readEffects<Effect>(effectLog);
  return {
    base: server.url,
    spec,
    dir,
    checkpointer,
    graph,
    server,
    effectLog,
    effects,
    count: (pattern) => effects().filter((e) => pattern.test(e.line)).length,
    async close() {
      await server.close();
      await checkpointer.close();
      await dropStore(spec);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
