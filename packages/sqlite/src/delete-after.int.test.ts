import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./index.js";
import { newThreadWrite } from "./support/new-thread-write.js";

let folder: string;
let store: SqliteCheckpointer;
beforeEach(() => {
  folder = join(tmpdir(), `tenxgraph-sqlite-delete-after-${randomUUID()}`);
  store = new SqliteCheckpointer({ path: join(folder, "threads.db") });
});
afterEach(async () => {
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});

describe("SqliteCheckpointer delete-after times", () => {
  // The sweep compares ISO-8601 text, which orders as time only for years 0000 to 9999.
  it("never sweeps a time past year 9999, and sweeps one before year 0", async () => {
    const threads = ["far-future", "far-past", "tomorrow", "yesterday"];
    for (const threadId of threads) await store.putCheckpoint(newThreadWrite(threadId));
    const day = 86_400_000;
    await store.setDeleteAfter("far-future", new Date(8.64e15)); // +275760-09-13
    await store.setDeleteAfter("far-past", new Date(-1e14)); // -001199-02-15
    await store.setDeleteAfter("tomorrow", new Date(Date.now() + day));
    await store.setDeleteAfter("yesterday", new Date(Date.now() - day));

    expect((await store.deleteExpiredThreads()).sort()).toEqual(["far-past", "yesterday"]);
    expect(await store.getCheckpoint("far-future")).not.toBeNull();
  });
});
