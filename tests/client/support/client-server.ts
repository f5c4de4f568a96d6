import { SignJWT } from "jose";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger, type AnyCompiledGraph } from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { TenxgraphClient } from "@tenxgraph/client";
import { serve, type RunningServer } from "@tenxgraph/server";
import { dropStore, freshStore } from "../../support/fresh-store.js";
import { STORES, openStore, type StoreKind, type StoreSpec } from "../../support/store-spec.js";
import { TEST_JWT_SECRET, tokenFor } from "../../server/support/http.js";
import { buildClientGraph } from "./client-graph.js";
import { Gate } from "./gate.js";

/** How a test's clients send: Node.js's default (keep-alive `node:http`), or fetch passed in. */
export interface ClientTransport {
  id: "http" | "fetch";
  label: string;
  /** What a `TenxgraphClient` is given to send this way. */
  options: { fetch?: typeof fetch };
}

export const TRANSPORTS: readonly ClientTransport[] = [
  { id: "http", label: "node:http", options: {} },
  { id: "fetch", label: "fetch", options: { fetch: globalThis.fetch } },
];

/** Every store with every transport: `describe.each(CLIENT_CASES)("… on $label", …)`. */
export const CLIENT_CASES = STORES.flatMap((store) =>
  TRANSPORTS.map((transport) => ({
    kind: store.kind,
    transport,
    label: `${store.label} over ${transport.label}`,
  })),
);

/** A real server on 127.0.0.1 (free port, JWT auth) over a fresh store, and what tests inspect. */
export interface ClientTestServer {
  url: string;
  spec: StoreSpec;
  checkpointer: Checkpointer;
  gate: Gate;
  /** Orders charge_card really charged, in order. */
  charges: string[];
  server: RunningServer;
  /** A client that sends a token for `userId` (with `claims` beside `user_id`), over the transport. */
  clientFor(userId: string, claims?: Record<string, unknown>): Promise<TenxgraphClient>;
  close(): Promise<void>;
}

/**
 * Starts the client tests' graph (or `build`'s) behind `serve()` on `kind` (SQLite file, or
 * PostgreSQL + Redis); its clients send over `transport` (default: Node.js's default).
 */
export async function startClientServer(
  kind: StoreKind,
  name: string,
  options: {
    transport?: ClientTransport;
    maxBodyBytes?: number;
    /** A graph of the test's own, charging into `charges` (default: the client tests' graph). */
    build?: (checkpointer: Checkpointer, charges: string[]) => AnyCompiledGraph;
  } = {},
): Promise<ClientTestServer> {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-client-"));
  const transport = options.transport ?? TRANSPORTS[0]!;
  const spec = freshStore(kind, `${name}_${transport.id}`, dir);
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
      return new TenxgraphClient({ baseUrl: server.url, token, ...transport.options });
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
