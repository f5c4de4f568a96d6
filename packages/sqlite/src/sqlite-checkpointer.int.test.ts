import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkpointerConformance } from "@tenxgraph/core/testing";
import { SqliteCheckpointer } from "./index.js";

const folder = join(tmpdir(), `tenxgraph-sqlite-conformance-${randomUUID()}`);
const path = join(folder, "threads.db");

checkpointerConformance(
  {
    name: "SqliteCheckpointer",
    create: async () => new SqliteCheckpointer({ path }),
    createWith: async (options) => new SqliteCheckpointer({ path, ...options }),
    // A second connection to the same file, as a second process would open.
    peer: async () => new SqliteCheckpointer({ path }),
    destroy: (checkpointer) => checkpointer.close(),
    afterAll: async () => rmSync(folder, { recursive: true, force: true }),
  },
  await import("vitest"),
);
