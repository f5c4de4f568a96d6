import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer, DEFAULT_SQLITE_PATH } from "./index.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS, SCHEMA_TABLE } from "./migrations.js";
import { openDatabase } from "./open-database.js";
import { newThreadWrite } from "./support/new-thread-write.js";

let folder: string;
beforeEach(() => {
  folder = join(tmpdir(), `tenxgraph-sqlite-open-${randomUUID()}`);
  mkdirSync(folder);
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** A file written by setup(), closed again. */
async function createStore(path: string): Promise<void> {
  const store = new SqliteCheckpointer({ path });
  await store.setup();
  await store.close();
}

/** Asserts that every operation fails with `code` and that the file's bytes did not change. */
async function expectRefused(path: string, code: string, message: RegExp): Promise<void> {
  const before = readFileSync(path);
  const store = new SqliteCheckpointer({ path });
  try {
    await expect(store.setup()).rejects.toMatchObject({ code, message });
    // Setup runs again on the next use and refuses again: no call gets through.
    await expect(store.getCheckpoint("t")).rejects.toMatchObject({ code });
    await expect(store.listThreads()).rejects.toMatchObject({ code });
  } finally {
    await store.close();
  }
  expect(readFileSync(path).equals(before)).toBe(true);
}

describe("SqliteCheckpointer opening a file", () => {
  it("creates the file and missing folders on first use, in WAL mode with synchronous FULL", async () => {
    const path = join(folder, "a", "b", "threads.db");
    const store = new SqliteCheckpointer({ path });
    expect(existsSync(path)).toBe(false); // the constructor touches nothing
    expect(await store.getCheckpoint("t")).toBeNull();
    await store.close();

    const db = new Database(path);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    const versions = db.prepare(`SELECT version FROM ${SCHEMA_TABLE}`).pluck().all();
    expect(versions).toEqual(Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1));
    db.close();
  });

  it("uses ./.tenxgraph/threads.db by default", () => {
    const store = new SqliteCheckpointer();
    expect(DEFAULT_SQLITE_PATH).toBe("./.tenxgraph/threads.db");
    expect(store.path).toBe(DEFAULT_SQLITE_PATH);
  });

  it("sets the synchronous level it was given on its connection", async () => {
    for (const [synchronous, level] of [
      ["FULL", 2],
      ["NORMAL", 1],
    ] as const) {
      // The pragma is per connection: read it on a connection opened the way the store opens its own.
      const db = openDatabase({ path: join(folder, "sync.db"), synchronous, busyTimeoutMs: 100 });
      expect(db.pragma("synchronous", { simple: true })).toBe(level);
      expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
      db.close();
    }
  });

  it("rejects bad options with an error that names the option", () => {
    const make = (options: object) => () => new SqliteCheckpointer(options);
    expect(make({ path: "" })).toThrow(/path must be a non-empty string/);
    expect(make({ synchronous: "OFF" })).toThrow(
      /synchronous must be "FULL" or "NORMAL", got "OFF"/,
    );
    expect(make({ busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs must be a whole number/);
  });

  it("keeps data across setup() calls and reopening", async () => {
    const path = join(folder, "threads.db");
    const first = new SqliteCheckpointer({ path });
    await first.putCheckpoint(newThreadWrite("kept", { values: { n: 1 } }));
    await first.setup();
    await first.close();
    const second = new SqliteCheckpointer({ path });
    expect(await second.getCheckpoint("kept")).toMatchObject({ version: 1, values: { n: 1 } });
    await second.close();
  });

  it("migrates a file of schema 1 step by step, keeping its threads and stop requests", async () => {
    const path = join(folder, "v1.db");
    const db = new Database(path);
    db.exec(`CREATE TABLE ${SCHEMA_TABLE} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`);
    for (const statement of MIGRATIONS[0]!.up) db.exec(statement);
    db.prepare(`INSERT INTO ${SCHEMA_TABLE} VALUES (1, ?)`).run(new Date().toISOString());
    const now = new Date().toISOString();
    db.prepare(
      `INSERT INTO threads (thread_id, user_id, status, version, message_count, stop_requests,
                            write_seq, created_at, updated_at)
       VALUES ('old', NULL, 'running', 1, 0, 2, 1, ?, ?)`,
    ).run(now, now);
    db.prepare(
      `INSERT INTO states (thread_id, version, step, current_node, status, values_json,
                           interrupts_json, resume_answers_json, created_at)
       VALUES ('old', 1, 0, 'MAIN', 'running', '{"kept":true}', '[]', '{}', ?)`,
    ).run(now);
    db.close();

    const store = new SqliteCheckpointer({ path });
    expect(await store.getCheckpoint("old")).toMatchObject({ version: 1, values: { kept: true } });
    expect(await store.countStopRequests("old")).toBe(2);
    await store.close();
    const reopened = new Database(path, { readonly: true });
    const versions = reopened.prepare(`SELECT version FROM ${SCHEMA_TABLE}`).pluck().all();
    expect(versions).toEqual(Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1));
    reopened.close();
  });

  it("lets several connections set up one new file at once", async () => {
    const path = join(folder, "threads.db");
    const stores = Array.from({ length: 4 }, () => new SqliteCheckpointer({ path }));
    await Promise.all(stores.map((store) => store.setup()));
    await stores[0]!.putCheckpoint(newThreadWrite("shared"));
    for (const store of stores) expect(await store.getCheckpoint("shared")).not.toBeNull();
    await Promise.all(stores.map((store) => store.close()));
  });
});

describe("SqliteCheckpointer refusing a file it must not use", () => {
  it("refuses a file that is not a SQLite database, and writes nothing beside it", async () => {
    const path = join(folder, "notes.txt");
    writeFileSync(path, "These are my notes, not a database.\n".repeat(50));
    await expectRefused(path, "STORAGE_SCHEMA_002", /not a SQLite database/);
    expect(readdirSync(folder)).toEqual(["notes.txt"]);
  });

  it("refuses a corrupt database file", async () => {
    const path = join(folder, "threads.db");
    await createStore(path);
    const bytes = readFileSync(path);
    bytes.fill(0xff, 100, 140); // the header of the schema page
    writeFileSync(path, bytes);
    await expectRefused(path, "STORAGE_SCHEMA_002", /corrupt/);
  });

  it("refuses another program's database that has tables named like ours", async () => {
    const path = join(folder, "app.db");
    const db = new Database(path);
    db.exec("CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT)");
    db.prepare("INSERT INTO messages (body) VALUES (?)").run("hello");
    db.close();
    await expectRefused(path, "STORAGE_SCHEMA_002", /tables named messages .*another program/);
  });

  it("shares a database with unrelated tables of the application and leaves them alone", async () => {
    const path = join(folder, "app.db");
    const db = new Database(path);
    db.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER)");
    db.prepare("INSERT INTO invoices (total) VALUES (?)").run(42);
    const store = new SqliteCheckpointer({ path });
    await store.putCheckpoint(newThreadWrite("t"));
    await store.close();
    expect(db.prepare("SELECT total FROM invoices").pluck().all()).toEqual([42]);
    db.close();
  });

  it("refuses a schema newer than the code and changes nothing", async () => {
    const path = join(folder, "threads.db");
    await createStore(path);
    const db = new Database(path);
    db.prepare(`INSERT INTO ${SCHEMA_TABLE} (version, applied_at) VALUES (?, ?)`).run(
      LATEST_SCHEMA_VERSION + 1,
      new Date().toISOString(),
    );
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    const newer = new RegExp(`version ${LATEST_SCHEMA_VERSION + 1}, newer .*upgrade`);
    await expectRefused(path, "STORAGE_SCHEMA_001", newer);
  });

  it("fails with STORAGE_FAILURE_001 naming the path when its folder cannot be created", async () => {
    const blocker = join(folder, "file");
    writeFileSync(blocker, "");
    const store = new SqliteCheckpointer({ path: join(blocker, "threads.db") });
    await expect(store.setup()).rejects.toMatchObject({
      code: "STORAGE_FAILURE_001",
      message: /cannot create the folder of '.*file\/threads.db'/,
    });
    await store.close();
  });

  // Node.js 20's recursive mkdir loops forever on these, blocking the event loop, so each case
  // runs in a child process that the kill timeout ends if it hangs.
  it(
    "fails with STORAGE_FAILURE_001 when the working directory of the default path was deleted",
    () => {
      const outcome = openInChild("deleted-cwd", join(folder, "cwd"));
      expect(outcome).toMatchObject({
        code: "STORAGE_FAILURE_001",
        message:
          /cannot create the folder of '\.\/\.tenxgraph\/threads\.db'.*working directory no longer exists/,
      });
    },
    CHILD_TEST_TIMEOUT_MS,
  );

  it(
    "fails with STORAGE_FAILURE_001 for a path under /proc",
    () => {
      const outcome = openInChild("path", "/proc/tenxgraph/threads.db");
      expect(outcome).toMatchObject({
        code: "STORAGE_FAILURE_001",
        message: /cannot create the folder of '\/proc\/tenxgraph\/threads\.db'/,
      });
    },
    CHILD_TEST_TIMEOUT_MS,
  );

  it("fails with STORAGE_FAILURE_001 on a read-only database and keeps its data", async () => {
    const path = join(folder, "threads.db");
    const store = new SqliteCheckpointer({ path });
    await store.putCheckpoint(newThreadWrite("t"));
    await store.close();
    const before = readFileSync(path);
    makeReadOnly(folder, path);
    try {
      const readOnly = new SqliteCheckpointer({ path });
      const failure = readOnly.putCheckpoint({ ...newThreadWrite("t"), expectedVersion: 1 });
      await expect(failure).rejects.toMatchObject({
        code: "STORAGE_FAILURE_001",
        message: /cannot be (written|opened)/,
      });
      await readOnly.close();
    } finally {
      makeWritable(folder, path);
    }
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

const CHILD_KILL_AFTER_MS = 15_000;
const CHILD_TEST_TIMEOUT_MS = 30_000;

/**
 * Runs support/open-child.ts in a child process and returns how its setup() ended. A
 * child whose setup() never returns is SIGKILLed after CHILD_KILL_AFTER_MS, failing the test.
 */
function openInChild(
  mode: "path" | "deleted-cwd",
  arg: string,
): { code: unknown; message: string } {
  if (mode === "deleted-cwd") mkdirSync(arg);
  const script = fileURLToPath(new URL("./support/open-child.ts", import.meta.url));
  const child = spawnSync(process.execPath, ["--import", "tsx", script, mode, arg], {
    encoding: "utf8",
    timeout: CHILD_KILL_AFTER_MS,
    killSignal: "SIGKILL",
  });
  expect(child.signal, `setup() hung and was killed; stderr: ${child.stderr}`).toBeNull();
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as { code: unknown; message: string };
}

/**
 * Makes the folder and file unwritable. Root ignores file modes, so as root the immutable
 * attribute does it (chattr; the CI runs as root), otherwise chmod.
 */
function makeReadOnly(folder: string, path: string): void {
  if (process.getuid?.() === 0) execFileSync("chattr", ["+i", path, folder]);
  else execFileSync("chmod", ["a-w", path, folder]);
}

function makeWritable(folder: string, path: string): void {
  if (process.getuid?.() === 0) execFileSync("chattr", ["-i", path, folder]);
  else execFileSync("chmod", ["u+w", path, folder]);
}
