/**
 * Writes the upgrade tests' fixtures with the code as built (`npm run build` first): a SQLite
 * file and a PostgreSQL dump (`pg_dump --inserts` of one schema), each holding the threads of
 * `writeReleaseThreads`. Run it on a release to capture the stores it makes, then keep the files:
 *
 *     npx tsx tests/upgrade/make-release-fixtures.ts
 *
 * The fixtures in `fixtures/` come from the release named in `FIXTURE_RELEASE`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";
import { PostgresServer, postgresBinary } from "@tenxgraph/test-servers";
import { FIXTURE_SCHEMA, writeReleaseThreads } from "./release-scenario.js";

const FIXTURES = new URL("fixtures/", import.meta.url).pathname;

async function sqliteFixture(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "txg-fixture-"));
  try {
    const store = new SqliteCheckpointer({ path: join(dir, "release.db") });
    await writeReleaseThreads(store);
    await store.close();
    // VACUUM INTO: one self-contained file, without the write-ahead log beside it.
    const Database = (await import("better-sqlite3")).default;
    const db = new Database(join(dir, "release.db"));
    rmSync(join(FIXTURES, "sqlite-release.db"), { force: true });
    db.prepare("VACUUM INTO ?").run(join(FIXTURES, "sqlite-release.db"));
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresFixture(): Promise<void> {
  const server = await PostgresServer.start({ name: "fixture" });
  try {
    const store = new PgCheckpointer({ postgresDsn: server.dsn, schema: FIXTURE_SCHEMA });
    await writeReleaseThreads(store);
    await store.close();
    const dump = execFileSync(
      postgresBinary("pg_dump"),
      ["--inserts", "--no-owner", "--no-privileges", "--schema", FIXTURE_SCHEMA, server.dsn],
      { encoding: "utf8" },
    );
    writeFileSync(join(FIXTURES, "postgres-release.sql"), dump);
  } finally {
    await server.destroy();
  }
}

await sqliteFixture();
await postgresFixture();
