import { SignJWT } from "jose";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger, type AnyCompiledGraph } from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { TenxgraphClient } from "@tenxgraph/client";
import { serve, type RunningServer } from "@tenxgraph/server";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { openStore, type StoreKind, type StoreSpec } from "../../support/store-spec.js";
import { TEST_JWT_SECRET, tokenFor } from "../../server/support/http.js";
import { buildClientGraph } from "./client-graph.js";
import { Gate } from "./gate.js";

/** A real server on 127.0.0.1 (free port, JWT auth) over a fresh store, and what tests inspect. */
export interface ClientTestServer {
  url: string;
  spec: StoreSpec;
  checkpointer: Checkpointer;
  gate: Gate;
  /** Orders charge_card really charged, in order. */
  charges: string[];
  server: RunningServer;
  /** A client that sends a token for `userId` (with `claims` beside `user_id`). */
  clientFor(userId: string, claims?: Record<string, unknown>): Promise<TenxgraphClient>;
  close(): Promise<void>;
}

/** Starts the client tests' graph (or `build`'s) behind `serve()` on `kind` (SQLite file, or PostgreSQL + Redis). */
export async function startClientServer(
  kind: StoreKind,
  name: string,
  options: {
    maxBodyBytes?: number;
    /** A graph of the test's own, charging into `charges` (default: the client tests' graph). */
    build?: (checkpointer: Checkpointer, charges: string[]) => AnyCompiledGraph;
  } = {},
): Promise<ClientTestServer> {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-client-"));
  const spec = freshStore(kind, name, dir);
  const checkpointer = openStore(spec);
  const gate = new Gate();
  const charges: string[] = [];
  const graph = options.build
    ? options.build(checkpointer, charges)
    : buildClientGraph(checkpointer, gate, charges);
  const server = await serve({
    graph,
    host: "127.0.0.1",
    port: 0,
    auth: { method: "jwt", secret: TEST_JWT_SECRET },
    logger: silentLogger,
    ...(options.maxBodyBytes ? { maxBodyBytes: options.maxBodyBytes } : {}),
  });
  return {
    url: server.url,
    spec,
    checkpointer,
    gate,
    charges,
    server,
    async clientFor(userId, claims) {
      const token = claims
        ? await new SignJWT({ ...claims, user_id: userId })
            .setProtectedHeader({ alg: "HS256" })
            .setExpirationTime("1h")
            .sign(new TextEncoder().encode(TEST_JWT_SECRET))
        : await tokenFor(userId);
      return new TenxgraphClient({ baseUrl: server.url, token });
    },
    async close() {
      gate.open();
      await server.close();
      await checkpointer.close();
      await dropStore(spec);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
