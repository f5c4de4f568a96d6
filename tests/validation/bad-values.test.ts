/**
 * Values a store cannot keep, refused by the runtime with one coded error naming the field,
 * the same on every store (in-memory, SQLite, PostgreSQL + Redis), before anything is written:
 * `INPUT_001` for the input and config of a run, `NODE_OUTPUT_001` for what a node returns.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  END,
  InMemoryCheckpointer,
  Message,
  StateGraph,
  silentLogger,
  type RunConfig,
  type RunInput,
} from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import { PgCheckpointer } from "@tenxgraph/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropStore, freshStore } from "../support/fresh-store.js";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { openStore, type StoreSpec } from "../support/store-spec.js";

type State = { messages: Message[]; amount?: unknown };

const STORES = [
  { label: "in-memory", kind: "memory" },
  { label: "SQLite", kind: "sqlite" },
  { label: "PostgreSQL + Redis", kind: "postgres" },
] as const;

function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: "loop" };
  value.self = value;
  return value;
}

/** A thread every case starts from: one completed turn, at version 3. */
const SEEDED = "seeded";

describe.each(STORES)("on $label", ({ kind }) => {
  const folder = join(tmpdir(), `tenxgraph-bad-values-${kind}-${randomUUID()}`);
  let spec: StoreSpec | null = null;
  let store: Checkpointer;
  /** What MAIN returns in the next run. */
  let output: unknown = null;
  const app = () =>
    new StateGraph<State>()
      .addNode("MAIN", () => output as Message)
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile({ checkpointer: store, logger: silentLogger });

  beforeAll(async () => {
    mkdirSync(folder, { recursive: true });
    if (kind === "memory") {
      store = new InMemoryCheckpointer();
    } else {
      spec = freshStore(kind, "bad_values", folder);
      store = openStore(spec);
    }
    output = Message.assistant("hello");
    await app().invoke({ messages: [Message.user("hi")] }, { threadId: SEEDED });
  });

  afterAll(async () => {
    await store.close();
    if (spec) await dropStore(spec);
    rmSync(folder, { recursive: true, force: true });
  });

  /** The seeded thread as stored: unchanged by a refused run. */
  async function seeded() {
    const checkpoint = await store.getCheckpoint(SEEDED);
    return { checkpoint, messages: await store.listMessages(SEEDED) };
  }

  const tooLong = "t".repeat(10 * 1024);
  it.each([
    ["a BigInt field", { amount: 10n }, {}, /^input\.amount: BigInt is not JSON/],
    ["a circular field", { amount: circular() }, {}, /^input\.amount\.self: a circular/],
    ["a function field", { amount: () => 1 }, {}, /^input\.amount: a function is not JSON/],
    [
      "a malformed message",
      { messages: [Message.user("a"), Message.user("b"), { role: "user" }] },
      {},
      /^input\.messages\[2\] is not a message/,
    ],
    [
      "a LangChain message",
      {
        messages: [
          {
            lc: 1,
            type: "constructor",
            id: ["langchain_core", "messages", "HumanMessage"],
            kwargs: {},
          },
        ],
      },
      {},
      /^input\.messages\[0\] is a LangChain message: convert the input with langchainInput/,
    ],
    [
      "a BigInt inside a message",
      { messages: [{ ...Message.user("a"), extra: 1n }] },
      {},
      /^input\.messages\[0\]\.extra: BigInt is not JSON/,
    ],
    ["signal: {}", {}, { signal: {} }, /^config\.signal must be an AbortSignal/],
    ["an object threadId", {}, { threadId: { id: 1 } }, /^config\.threadId must be a string/],
    [
      "a 10 KB threadId",
      {},
      { threadId: tooLong },
      /^config\.threadId is 10240 characters long; the limit is 256$/,
    ],
  ])(
    "refuses %s in a run's input or config with INPUT_001, writing nothing",
    async (_, input, config, message) => {
      const before = await seeded();
      const run = app().invoke(input as RunInput<State>, {
        threadId: SEEDED,
        ...(config as RunConfig),
      });
      await expect(run).rejects.toMatchObject({ code: "INPUT_001", message });
      expect(await seeded()).toEqual(before);
    },
  );

  it.each([
    ["a BigInt", { amount: 10n }, /state\.values\.amount: BigInt is not JSON/],
    ["a circular value", { amount: circular() }, /state\.values\.amount\.self: a circular/],
    ["a function", { amount: () => 1 }, /state\.values\.amount: a function is not JSON/],
    [
      "a malformed message",
      { ...Message.assistant("x"), content: 5 },
      /returned an invalid message \[0\] at 'content'/,
    ],
    [
      "a message with a BigInt",
      { ...Message.assistant("x"), extra: 1n },
      /messages\[1\]\.extra: BigInt/,
    ],
  ])(
    "refuses a node that returns %s with NODE_OUTPUT_001; the thread keeps its values",
    async (_, returned, message) => {
      const threadId = `node-${randomUUID()}`;
      output = returned;
      const run = app().invoke({ messages: [Message.user("go")] }, { threadId });
      await expect(run).rejects.toMatchObject({
        code: "NODE_OUTPUT_001",
        message: expect.stringMatching(new RegExp(`^Node 'MAIN' .*${message.source}`)),
      });
      // The input's start write stands; the refused step was not written; the failure was.
      const checkpoint = await store.getCheckpoint(threadId);
      expect(checkpoint).toMatchObject({ status: "failed", currentNode: "MAIN", values: {} });
      expect((await store.listMessages(threadId)).map((m) => m.content)).toEqual(["go"]);
    },
  );
});

describe("PgCheckpointer with a malformed Redis URL", () => {
  it("is refused at construction with CONFIG_001, without the password", () => {
    let error: unknown;
    try {
      new PgCheckpointer({ postgresDsn: testPostgresDsn(), redisUrl: "redis://:bad@@host:xx" });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toMatchObject({
      code: "CONFIG_001",
      message: expect.stringMatching(/^PgCheckpointer: redisUrl is not a valid URL/),
    });
    expect((error as Error).message).not.toContain("bad@");
  });
});
