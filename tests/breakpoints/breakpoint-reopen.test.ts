import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  END,
  Message,
  StateGraph,
  ToolNode,
  silentLogger,
  tool,
  type BaseState,
  type CompileOptions,
} from "@tenxgraph/core";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** MODEL asks for `charge`, TOOLS runs it, MODEL answers; every charge is counted. */
function agent(checkpointer: SqliteCheckpointer, charges: number[], options: CompileOptions) {
  const charge = tool({
    name: "charge",
    description: "Charge the card",
    schema: z.object({ cents: z.number() }),
    execute: ({ cents }) => {
      charges.push(cents);
      return `charged ${cents}`;
    },
  });
  return new StateGraph<BaseState>()
    .addNode("MODEL", (state) =>
      state.messages.some((m) => m.role === "tool")
        ? Message.assistant("Done")
        : Message.assistant("", [
            { id: "c1", name: "charge", arguments: JSON.stringify({ cents: 42 }) },
          ]),
    )
    .addNode("TOOLS", new ToolNode([charge]))
    .addConditionalEdges("MODEL", (s) => (s.messages.at(-1)?.toolCalls ? "TOOLS" : END), [
      "TOOLS",
      END,
    ])
    .addEdge("TOOLS", "MODEL")
    .setEntryPoint("MODEL")
    .compile({ checkpointer, logger: silentLogger, ...options });
}

/** A fresh SQLite file, and a way to open it again as a new store (as a new process would). */
function sqliteFile(): () => SqliteCheckpointer {
  const folder = mkdtempSync(join(tmpdir(), "tenxgraph-breakpoints-"));
  folders.push(folder);
  return () => new SqliteCheckpointer({ path: join(folder, "threads.db") });
}

describe("a static breakpoint pause is durable (SQLite file, store reopened)", () => {
  it.each([
    { options: { interruptBefore: ["TOOLS"] }, charged: [], next: ["TOOLS"] },
    { options: { interruptAfter: ["TOOLS"] }, charged: [42], next: ["MODEL"] },
  ])("$options: a new store on the file continues with invoke(null)", async (c) => {
    const open = sqliteFile();
    const first = open();
    await first.setup();
    const firstCharges: number[] = [];
    const paused = await agent(first, firstCharges, c.options).invoke(
      { messages: [Message.user("charge me")] },
      { threadId: "t" },
    );
    expect(paused.status).toBe("interrupted");
    expect(firstCharges).toEqual(c.charged);
    await first.close();

    const second = open();
    await second.setup();
    const secondCharges: number[] = [];
    const app = agent(second, secondCharges, c.options);
    expect(await app.getState({ threadId: "t" })).toMatchObject({
      status: "interrupted",
      next: c.next,
      interrupts: [],
    });
    const done = await app.invoke(null, { threadId: "t" });
    expect(done.status).toBe("completed");
    expect(done.state.messages.at(-1)?.content).toBe("Done");
    expect([...firstCharges, ...secondCharges], "charged once in all").toEqual([42]);
    const ledger = await app.getToolLedger({ threadId: "t" });
    expect(ledger.map((entry) => entry.status)).toEqual(["completed"]);
    await second.close();
  });
});
