import { createHash } from "node:crypto";
import type pg from "pg";
import { FUNCTIONS } from "./functions/index.js";

/** Every function of ours is named so; setup drops one it no longer has a text for. */
const PREFIX = "tenxgraph_";

/**
 * Installs the store's functions as this code has them, in the setup transaction under its
 * advisory lock, after the numbered migrations. `tenxgraph_functions` records the digest of the
 * text each was made from, so a function is made again only when its text changed (a start of
 * an up-to-date store reads that table and nothing else): every version of it, whatever its
 * arguments, is dropped, and the current text creates it. A function of ours this code no
 * longer has is dropped. Old calls fail cleanly rather than run an outdated body.
 */
export async function installFunctions(client: pg.PoolClient, schema: string): Promise<void> {
  const { rows } = await client.query<{ name: string; digest: string }>(
    "SELECT name, digest FROM tenxgraph_functions",
  );
  const installed = new Map(rows.map((row) => [row.name, row.digest]));
  const stale = FUNCTIONS.map((fn) => ({ ...fn, digest: digestOf(fn.text) })).filter(
    (fn) => installed.get(fn.name) !== fn.digest,
  );
  const current = new Set(FUNCTIONS.map((fn) => fn.name));
  if (stale.length === 0 && [...installed.keys()].every((name) => current.has(name))) return;
  for (const { name, text, digest } of stale) {
    await dropFunction(client, schema, name);
    await client.query(text);
    await client.query(
      `INSERT INTO tenxgraph_functions (name, digest) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET digest = excluded.digest, installed_at = now()`,
      [name, digest],
    );
  }
  // Functions of ours this code has no text for: made by an earlier release, or by a migration
  // from before functions were code.
  const { rows: ours } = await client.query<{ name: string }>(
    `SELECT DISTINCT p.proname AS name FROM pg_proc p
     JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = $1 AND starts_with(p.proname, $2)`,
    [schema, PREFIX],
  );
  for (const { name } of ours.filter((fn) => !current.has(fn.name))) {
    await dropFunction(client, schema, name);
  }
  await client.query("DELETE FROM tenxgraph_functions WHERE NOT name = ANY ($1)", [[...current]]);
}

function digestOf(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Drops every function `name` of the schema, whatever its arguments. */
async function dropFunction(client: pg.PoolClient, schema: string, name: string): Promise<void> {
  const { rows } = await client.query<{ signature: string }>(
    `SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
     JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = $1 AND p.proname = $2`,
    [schema, name],
  );
  for (const { signature } of rows) await client.query(`DROP FUNCTION ${signature}`);
}
