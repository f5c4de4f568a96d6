import { readFileSync } from "node:fs";
import type { Message } from "@tenxgraph/core";
import type { CheckpointWrite, StepLedgerWrites } from "@tenxgraph/core/storage";
import type pg from "pg";
import { toJsonb } from "../json.js";
import { claimsJsonb, completionsJsonb } from "../ledger/step-ledger.js";

/**
 * Every migration's statements as release ecb1ce3 published them, functions included (they were
 * schema steps then; now they are code, see schema/functions/). Tests build a store as an
 * earlier release left it from these, then let today's setup migrate it.
 */
export const PUBLISHED_MIGRATIONS: readonly (readonly string[])[] = JSON.parse(
  readFileSync(new URL("../../test-fixtures/published-migrations.json", import.meta.url), "utf8"),
) as string[][];

/** Applies published migrations 1 to `version` in the client's schema, recording each. */
export async function migrateAsPublished(client: pg.Client, version: number): Promise<void> {
  for (const [index, statements] of PUBLISHED_MIGRATIONS.slice(0, version).entries()) {
    for (const statement of statements) await client.query(statement);
    await client.query("INSERT INTO tenxgraph_schema (version) VALUES ($1)", [index + 1]);
  }
}

/** A step as schema versions 7 to 9 wrote it: 22 arguments. */
export const PUBLISHED_PUT_CHECKPOINT = `SELECT * FROM tenxgraph_put_checkpoint(
  $1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12::jsonb, $13::jsonb, $14::jsonb, $15,
  $16::jsonb, $17, $18::jsonb, $19, $20::jsonb, $21::jsonb, $22)`;

/** A write as {@link PUBLISHED_PUT_CHECKPOINT} takes it. */
export interface PublishedWrite extends CheckpointWrite {
  parentVersion: number;
  node: string | null;
  runId: string | null;
  replacedMessages: Message[];
  removedMessageIds: string[];
  ledger: StepLedgerWrites;
}

/** The arguments of {@link PUBLISHED_PUT_CHECKPOINT}, in order, as release ecb1ce3 sent them. */
export function publishedStepParams(write: PublishedWrite, keepVersions: number | null): unknown[] {
  const messages = (list: readonly Message[]) => `[${list.map(toJsonb).join(",")}]`;
  return [
    write.threadId,
    write.incarnation,
    write.userId,
    write.expectedVersion,
    write.parentVersion,
    write.node,
    write.runId,
    write.step,
    write.currentNode,
    write.frontier ? toJsonb(write.frontier) : null,
    write.status,
    toJsonb(write.values),
    toJsonb(write.interrupts),
    toJsonb(write.resumeAnswers),
    write.newMessages.map((message) => message.id),
    messages(write.newMessages),
    write.replacedMessages.map((message) => message.id),
    messages(write.replacedMessages),
    write.removedMessageIds,
    completionsJsonb(write.ledger.completions),
    claimsJsonb(write.ledger.claims),
    keepVersions,
  ];
}
