import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll } from "vitest";
import { tokenFor } from "../support/http.js";
import { freshStore } from "../../support/fresh-store.js";
import type { StoreKind, StoreSpec } from "../../support/store-spec.js";

const root = new URL("../../../", import.meta.url).pathname;

/**
 * A scratch folder for one test file's projects, removed after it: inside the repository
 * (ignored by git), so the projects' imports resolve to the workspace packages.
 */
export function scratchDir(prefix: string): string {
  mkdirSync(join(root, ".tenxgraph"), { recursive: true });
  const scratch = mkdtempSync(join(root, ".tenxgraph", prefix));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  return scratch;
}

/** A fresh store of `kind` for one project: a SQLite file in `dir`, or a PostgreSQL schema. */
export function storeFor(kind: StoreKind, name: string, dir: string): StoreSpec {
  mkdirSync(dir, { recursive: true });
  return freshStore(kind, name, dir);
}

/** The SDK's client for one user: no retries, so a refusal is seen as it is. */
export async function clientFor(apiUrl: string, user: string) {
  const token = await tokenFor(user);
  return new Client({
    apiUrl,
    defaultHeaders: { Authorization: `Bearer ${token}` },
    callerOptions: { maxRetries: 0 },
  });
}

/** A JSON answer read loosely: the SDK types values as unknown. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = any;

/** Every event of a run stream, in order. */
export async function collect(stream: AsyncIterable<{ event: string; data: unknown }>) {
  const events: { event: string; data: Loose }[] = [];
  for await (const part of stream) events.push({ event: part.event, data: part.data });
  return events;
}

/** A LangChain human message as a run's input. */
export const human = (content: string) => ({ messages: [{ type: "human", content }] });
