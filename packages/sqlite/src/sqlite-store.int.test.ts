import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storeConformance } from "@tenxgraph/core/testing";
import { SqliteStore } from "./index.js";

const folder = join(tmpdir(), `tenxgraph-sqlite-store-${randomUUID()}`);
const path = join(folder, "threads.db");

storeConformance(
  {
    name: "SqliteStore",
    create: async (options) => new SqliteStore({ path, ...options }),
    // A second connection to the same file, as a second process would open.
    peer: async () => new SqliteStore({ path }),
    destroy: (store) => (store as SqliteStore).close(),
    afterAll: async () => rmSync(folder, { recursive: true, force: true }),
  },
  await import("vitest"),
);
