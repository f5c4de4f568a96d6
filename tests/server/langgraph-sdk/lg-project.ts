import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StoreSpec } from "../../support/store-spec.js";

/**
 * The graph the LangGraph SDK suite drives, as a project file: MAIN streams its reply token by
 * token and writes a custom chunk; "approve" makes it ask a human (`interrupt`); "refund" makes
 * it call charge_card, whose every charge is a line in `charges.log`; "slow" makes it wait 30 s
 * (or until the run is stopped); "crash" calls charge_card and wait_for_bank at once, the
 * latter waiting while a file named `hold` exists; "book" calls book_room (keyed by its room:
 * one line `booked 12` per room, whichever call books it) and wait_for_bank; "fail" makes it throw.
 */
const GRAPH = `
import { appendFileSync, existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { END, interrupt, Message, StateGraph, ToolNode, tool } from "@tenxgraph/core";

const charge = tool({
  name: "charge_card",
  description: "Charge an order.",
  schema: z.object({ order_id: z.string() }),
  execute(args) {
    appendFileSync("charges.log", "charged " + args.order_id + "\\n");
    return "Charged 42 USD for order " + args.order_id;
  },
});

const waitForBank = tool({
  name: "wait_for_bank",
  description: "Wait until the bank answers (while a file named hold exists).",
  schema: z.object({}),
  async execute(_args, ctx) {
    while (existsSync("hold")) await sleep(50, undefined, { signal: ctx?.signal });
    return "bank ok";
  },
});

const bookRoom = tool({
  name: "book_room",
  description: "Book a room: one booking per room, whichever call asks (a domain key).",
  schema: z.object({ room: z.string() }),
  idempotencyKey: (args) => "room:" + args.room,
  execute(args) {
    appendFileSync("charges.log", "booked " + args.room + "\\n");
    return "Booked room " + args.room;
  },
});

function say(ctx, text, toolCalls) {
  const id = ctx.newId();
  for (const delta of text.match(/\\S+\\s*/g) ?? [])
    ctx.emit({ type: "message_delta", node: ctx.node, messageId: id, delta });
  return { ...Message.assistant(text, toolCalls), id };
}

export const graph = new StateGraph()
  .addNode("MAIN", async (state, ctx) => {
    const last = state.messages.at(-1);
    const text = Message.text(last);
    if (text.includes("slow")) await sleep(30_000, undefined, { signal: ctx.signal });
    if (text.includes("fail")) throw new Error("the bank is down");
    if (last.role === "tool") return say(ctx, "done: " + text);
    if (text.includes("crash"))
      return say(ctx, "", [
        { id: "call_c", name: "charge_card", arguments: '{"order_id":"7"}' },
        { id: "call_w", name: "wait_for_bank", arguments: "{}" },
      ]);
    if (text.includes("book"))
      return say(ctx, "", [
        { id: "call_b", name: "book_room", arguments: '{"room":"12"}' },
        { id: "call_w", name: "wait_for_bank", arguments: "{}" },
      ]);
    if (text.includes("refund"))
      return say(ctx, "", [{ id: "call_1", name: "charge_card", arguments: '{"order_id":"5"}' }]);
    if (text.includes("approve")) {
      const answer = interrupt({ question: "refund 42 USD?" }, { message: "Approve the refund?" });
      return Message.assistant("answer: " + JSON.stringify(answer));
    }
    ctx.write({ progress: 1 });
    return say(ctx, "hello there friend");
  })
  .addNode("TOOL", new ToolNode([charge, waitForBank, bookRoom]))
  .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
  .addEdge("TOOL", "MAIN")
  .setEntryPoint("MAIN");
`;

/** The project's checkpointer module for `store` (SQLite file or PostgreSQL schema). */
function storeModule(store: StoreSpec): string {
  if (store.kind === "sqlite")
    return `import { SqliteCheckpointer } from "@tenxgraph/sqlite";
     export const checkpointer = new SqliteCheckpointer({ path: ${JSON.stringify(store.path)} });`;
  const options = { postgresDsn: store.dsn, schema: store.schema, redisUrl: store.redisUrl };
  return `import { PgCheckpointer } from "@tenxgraph/postgres";
     export const checkpointer = new PgCheckpointer(${JSON.stringify(options)});`;
}

/**
 * Writes the project: `tenxgraph.json` (the store given, JWT auth, and the background runs'
 * settings when given) and its graph.
 */
export function writeLgProject(
  dir: string,
  store: StoreSpec = { kind: "sqlite", path: "./threads.db" },
  runs?: Record<string, unknown>,
  /** More of `tenxgraph.json` (e.g. `webhooks`). */
  more: Record<string, unknown> = {},
): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "tenxgraph.json"),
    JSON.stringify({
      agent: "./graph.mjs:graph",
      checkpointer: "./store.mjs:checkpointer",
      auth: "jwt",
      ...(runs ? { runs } : {}),
      ...more,
    }),
  );
  writeFileSync(join(dir, "store.mjs"), storeModule(store));
  writeFileSync(join(dir, "graph.mjs"), GRAPH);
}

/**
 * A `langgraph.json` project serving two graphs: `agent` (the default, the graph above) and
 * `echo`, which answers with `GREETING` (from the config's `env`) and the last text.
 */
export function writeLangGraphJsonProject(dir: string): void {
  writeLgProject(dir);
  writeFileSync(
    join(dir, "langgraph.json"),
    JSON.stringify({
      graphs: { agent: "./graph.mjs:graph", echo: "./echo.mjs:graph" },
      env: { GREETING: "hey" },
      dependencies: ["."],
      checkpointer: "./store.mjs:checkpointer",
    }),
  );
  rmSync(join(dir, "tenxgraph.json"));
  writeFileSync(
    join(dir, "echo.mjs"),
    `import { END, Message, StateGraph } from "@tenxgraph/core";
     export const graph = new StateGraph()
       .addNode("ECHO", (state) =>
         Message.assistant(process.env.GREETING + ": " + Message.text(state.messages.at(-1))))
       .addEdge("ECHO", END)
       .setEntryPoint("ECHO");`,
  );
}
