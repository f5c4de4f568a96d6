/**
 * The host connection (`createHostPool`, `withMigrationLock`, `applyMigrationSteps`) on a real
 * PostgreSQL: processes migrating at once apply each step once, and failures come out coded.
 */
import { isTenxgraphError } from "@tenxgraph/core";
import {
  applyMigrationSteps,
  createHostPool,
  hostDatabaseError,
  withMigrationLock,
  type MigrationStep,
} from "@tenxgraph/postgres";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { afterAll, describe, expect, it } from "vitest";
import { dropSchema, freshSchema } from "../support/pg-store.js";

const schema = freshSchema("host_steps");
const LOCK = 7_315_062_901;
const pool = createHostPool({ postgresDsn: testPostgresDsn(), max: 4 });

afterAll(async () => {
  await pool.end();
  await dropSchema(testPostgresDsn(), schema);
});

const STEPS: MigrationStep[] = [
  { name: "schema", statements: [`CREATE SCHEMA ${schema}`] },
  { name: "notes", statements: [`CREATE TABLE ${schema}.notes (id int PRIMARY KEY)`] },
];

describe("host connection", () => {
  it("applies each step once when several migrate at once, and appended steps later", async () => {
    const migrate = (steps: MigrationStep[]) =>
      withMigrationLock(pool, LOCK, (client) =>
        applyMigrationSteps(client, `public.${schema}_version`, steps),
      );
    await Promise.all([migrate(STEPS), migrate(STEPS), migrate(STEPS)]);
    const more = [
      ...STEPS,
      { name: "more", statements: [`INSERT INTO ${schema}.notes VALUES (1)`] },
    ];
    await Promise.all([migrate(more), migrate(more)]);
    const { rows } = await pool.query(`SELECT version FROM public.${schema}_version`);
    expect(rows).toEqual([{ version: 3 }]);
    expect((await pool.query(`SELECT id FROM ${schema}.notes`)).rows).toEqual([{ id: 1 }]);
    await pool.query(`DROP TABLE public.${schema}_version`);
  });

  it("turns a pg failure into a coded storage error that names the database, not the password", async () => {
    const failure = await pool.query("SELECT * FROM no_such_table_here").catch((e: unknown) => e);
    const error = hostDatabaseError("readRuns", pool, failure);
    expect(isTenxgraphError(error, "STORAGE_FAILURE_001")).toBe(true);
    expect(error.message).toContain("readRuns");
    expect(error.message).not.toMatch(/:[^/@:]+@/);
  });
});
