/** What the new project's package.json asks npm for. */
export interface InitPackages {
  /** Version ranges (or `file:` tarballs) of core, server, sqlite, tsx and zod. */
  versions: Record<string, string>;
  /** `overrides` for npm: the server's own @tenxgraph dependencies, when they come from files. */
  overrides: Record<string, string>;
}

/** The files `tenxgraph init` writes: a support agent served over HTTP, with a test. */
export function initTemplate(
  name: string,
  { versions, overrides }: InitPackages,
): Record<string, string> {
  return {
    "package.json": `${JSON.stringify(
      {
        name,
        private: true,
        type: "module",
        scripts: {
          start: "tenxgraph api",
          dev: "tenxgraph dev",
          test: "node --import tsx --test test/graph.test.ts",
        },
        dependencies: {
          "@tenxgraph/core": versions.core,
          "@tenxgraph/server": versions.server,
          "@tenxgraph/sqlite": versions.sqlite,
          tsx: versions.tsx,
          zod: versions.zod,
        },
        ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
        // npm 11 warns about (and later versions skip) dependency install scripts not listed
        // here: better-sqlite3 builds its native module, esbuild (under tsx) fetches its binary.
        allowScripts: { "better-sqlite3": true, esbuild: true },
      },
      null,
      2,
    )}\n`,
    "tenxgraph.json": `${JSON.stringify({ agent: "./graph.ts:app", auth: null, env: ".env" }, null, 2)}\n`,
    ".env.example":
      '# Copy to .env. With auth set to "jwt" in tenxgraph.json, tokens are checked with:\nJWT_SECRET_KEY=change-me\nJWT_ALGORITHM=HS256\n# Browser pages on other origins that may call the API (comma separated); none by default.\n# ORIGINS=http://localhost:5173\n',
    ".env": "",
    ".gitignore": "node_modules\n.tenxgraph\n.env\n",
    "graph.ts": GRAPH,
    "test/graph.test.ts": TEST,
  };
}

const GRAPH = `import { z } from "zod";
import { END, Message, StateGraph, ToolNode, tool, type BaseState } from "@tenxgraph/core";
import { SqliteCheckpointer } from "@tenxgraph/sqlite";

const order = z.object({ order_id: z.string() });
const tools = [
  tool({
    name: "lookup_order",
    description: "Find an order: its id and amount in cents.",
    schema: order,
    execute: (args) => ({ order_id: args.order_id, amount_cents: 4200 }),
  }),
  tool({
    name: "charge_card",
    description: "Charge the customer's saved card for an order.",
    schema: order.extend({ amount_cents: z.number().int() }),
    // One charge per order, whichever turn asks: hand the key to your payment provider too.
    idempotencyKey: (args) => \`order-\${args.order_id}-charge\`,
    execute: (args) => \`Charged \${args.amount_cents / 100} USD\`,
  }),
  tool({
    name: "send_receipt",
    description: "Email the receipt of an order.",
    schema: order,
    execute: () => "Receipt sent",
  }),
];

/** A scripted model (no API key): replace it with an Agent from @tenxgraph/models. */
export function supportModel(state: BaseState) {
  const last = state.messages.at(-1);
  const user = [...state.messages].reverse().find((m) => m.role === "user");
  const orderId = /\\d+/.exec(user ? Message.text(user) : "")?.[0];
  if (last?.role === "tool") return Message.assistant(\`Order \${orderId} is charged and the receipt is on its way.\`);
  if (!orderId) return Message.assistant("Which order should I charge? Tell me its number.");
  const call = (id: string, name: string, args: object) => ({ id, name, arguments: JSON.stringify(args) });
  return Message.assistant("", [
    call("call_1", "lookup_order", { order_id: orderId }),
    call("call_2", "charge_card", { order_id: orderId, amount_cents: 4200 }),
    call("call_3", "send_receipt", { order_id: orderId }),
  ]);
}

/** The graph \`tenxgraph api\` serves (see tenxgraph.json). */
export function buildGraph(path = process.env.TENXGRAPH_DB ?? ".tenxgraph/threads.db") {
  return new StateGraph()
    .addNode("MAIN", supportModel)
    .addNode("TOOL", new ToolNode(tools))
    .addConditionalEdges("MAIN", (state) => (state.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer: new SqliteCheckpointer({ path }) });
}

export const app = buildGraph();
`;

const TEST = `import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Message } from "@tenxgraph/core";
import { createApp } from "@tenxgraph/server";
import { buildGraph } from "../graph.js";

test("the agent charges the order once and answers, over HTTP", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-test-"));
  const graph = buildGraph(join(dir, "threads.db"));
  try {
    const app = createApp({ graph });
    const response = await app.request("/v1/graph/invoke", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        messages: [{ role: "user", content: [{ type: "text", text: "charge order 4821" }] }],
        config: { thread_id: "t1" },
      }),
    });
    assert.equal(response.status, 200);
    const { data } = await response.json();
    assert.equal(data.meta.status, "completed");
    assert.match(data.messages.at(-1).content[0].text, /Order 4821 is charged/);
    const ledger = await graph.getToolLedger({ threadId: "t1" });
    assert.deepEqual(ledger.map((e) => [e.toolName, e.status]).sort(), [
      ["charge_card", "completed"],
      ["lookup_order", "completed"],
      ["send_receipt", "completed"],
    ]);
    assert.equal(Message.text((await graph.getState({ threadId: "t1" }))!.values.messages.at(-1)!), data.messages.at(-1).content[0].text);
  } finally {
    await graph.checkpointer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
`;
