/**
 * A tenxgraph API server in its own process, for tests that kill it or run two of them:
 * serves the test support agent on 127.0.0.1 (a free port) and reports `{ type: "listening", port }`.
 */
import { silentLogger } from "@tenxgraph/core";
import { serve } from "@tenxgraph/server";
import { openStore, type StoreSpec } from "../../support/store-spec.js";
import { report, workerParams } from "../../support/worker-process.js";
import { buildTestGraph, type TestGraphParams } from "./test-graph.js";

/** Params of a server worker. */
export interface ServerWorkerParams extends TestGraphParams {
  store: StoreSpec;
}

const params = workerParams<ServerWorkerParams>();
const checkpointer = openStore(params.store);
const graph = buildTestGraph(params, checkpointer);
const server = await serve({ graph, host: "127.0.0.1", port: 0, logger: silentLogger });
await report({ type: "listening", port: server.port });
process.once("SIGTERM", () => {
  void server
    .close()
    .then(() => checkpointer.close())
    .then(() => process.exit(0));
});
