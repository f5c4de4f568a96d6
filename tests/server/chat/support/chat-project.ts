import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readEffects } from "../../../support/effect-log.js";
import { CliProcess } from "../../support/cli-process.js";
import { TEST_JWT_SECRET } from "../../support/http.js";

const root = new URL("../../../../", import.meta.url).pathname;

/**
 * A project for `tenxgraph api` (inside the repository, ignored by git, so its imports resolve
 * to the workspace packages): JWT auth, a SQLite file, and a support agent whose model streams
 * its words and reasons first. It says hello; for "charge order N" it asks for lookup_order,
 * charge_card (domain key) and send_receipt (which waits for a file named "mail-gate" when the
 * message says "slowly"); for "refund order N" it asks for refund_payment, which asks a human
 * through `interrupt()`; for "wire order N" it asks for wire_money (`onInDoubt: "interrupt"`),
 * which waits for a file named "wire-gate". Every charge, wire, receipt and refund that really happens is a line of
 * effects.jsonl with the process id.
 */
export function writeChatProject(name: string): string {
  mkdirSync(join(root, ".tenxgraph"), { recursive: true });
  const dir = mkdtempSync(join(root, ".tenxgraph", `chat-${name}-`));
  writeFileSync(
    join(dir, "tenxgraph.json"),
    JSON.stringify({
      agent: "./graph.mjs:graph",
      checkpointer: "./store.mjs:checkpointer",
      auth: "jwt",
    }),
  );
  writeFileSync(
    join(dir, "store.mjs"),
    `import { SqliteCheckpointer } from "@tenxgraph/sqlite";
     export const checkpointer = new SqliteCheckpointer({ path: "./threads.db" });`,
  );
  writeFileSync(join(dir, "graph.mjs"), GRAPH);
  return dir;
}

const GRAPH = `
import { appendFileSync, existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { END, Message, StateGraph, ToolNode, interrupt, tool } from "@tenxgraph/core";
import { z } from "zod";
import { checkpointer } from "./store.mjs";

const effect = (line) =>
  appendFileSync("effects.jsonl", JSON.stringify({ line, pid: process.pid }) + "\\n");
const order = z.object({ order_id: z.string() });
const tools = [
  tool({ name: "lookup_order", description: "Find an order.", schema: order,
    execute: (args) => ({ order_id: args.order_id, amount_cents: 4200 }) }),
  tool({ name: "charge_card", description: "Charge the card.", schema: order,
    idempotencyKey: (args) => "order-" + args.order_id + "-charge",
    execute(args) { effect("charged order " + args.order_id); return "Charged 42 USD"; } }),
  tool({ name: "send_receipt", description: "Email the receipt.",
    schema: order.extend({ slowly: z.boolean() }),
    async execute(args, ctx) {
      while (args.slowly && !existsSync("mail-gate")) await sleep(20, undefined, { signal: ctx.signal });
      effect("receipt for order " + args.order_id);
      return "Receipt sent";
    } }),
  tool({ name: "wire_money", description: "Wire money; a human decides when in doubt.", schema: order,
    onInDoubt: "interrupt",
    async execute(args, ctx) {
      while (!existsSync("wire-gate")) await sleep(20, undefined, { signal: ctx.signal });
      effect("wired order " + args.order_id);
      return "Wired 42 USD";
    } }),
  tool({ name: "refund_payment", description: "Refund an order.", schema: order,
    execute(args) {
      const decision = interrupt({ order_id: args.order_id, amount_cents: 4200 }, { message: "Refund this order?" });
      if (!decision?.approved) return "Refund declined" + (decision?.reason ? ": " + decision.reason : "");
      effect("refunded order " + args.order_id);
      return "Refunded 42 USD";
    } }),
];

function reply(state) {
  const asked = Message.text(state.messages.findLast((m) => m.role === "user"));
  const id = /\\d+/.exec(asked)?.[0];
  const last = state.messages.at(-1);
  const call = (n, name, args) => ({ id: "call_" + n, name, arguments: JSON.stringify(args) });
  if (last.role === "tool") return Message.assistant("All done for order " + id + ": " + Message.text(last) + ".");
  if (/wire/.test(asked)) return Message.assistant("", [call(1, "wire_money", { order_id: id })]);
  if (/refund/.test(asked)) return Message.assistant("", [call(1, "refund_payment", { order_id: id })]);
  if (/charge/.test(asked)) {
    return Message.assistant("", [
      call(1, "lookup_order", { order_id: id }),
      call(2, "charge_card", { order_id: id }),
      call(3, "send_receipt", { order_id: id, slowly: /slowly/.test(asked) }),
    ]);
  }
  const message = Message.assistant("Hello! Ask me to charge or refund an order.");
  message.reasoning = [{ text: "The user said hello; I offer what I can do." }];
  return message;
}

async function model(state, ctx) {
  const message = reply(state);
  for (const delta of Message.text(message).match(/\\S+\\s*/g) ?? []) {
    ctx.emit({ type: "message_delta", node: ctx.node, messageId: message.id, delta });
  }
  return message;
}

export const graph = new StateGraph()
  .addNode("MAIN", model)
  .addNode("TOOL", new ToolNode(tools))
  .addConditionalEdges("MAIN", (s) => (s.messages.at(-1).toolCalls?.length ? "TOOL" : END))
  .addEdge("TOOL", "MAIN")
  .setEntryPoint("MAIN")
  .compile({ checkpointer, claimStaleAfterMs: 1000, stopPollIntervalMs: 250 });
`;

/** `tenxgraph api` on the project, with its JWT secret; resolves once it listens. */
export async function startChatServer(dir: string): Promise<{ cli: CliProcess; base: string }> {
  const cli = new CliProcess(["api", "--port", "0", "--no-inspector"], {
    cwd: dir,
    env: { JWT_SECRET_KEY: TEST_JWT_SECRET },
  });
  return { cli, base: await cli.url() };
}

/** The effects of the project that really happened, matching `pattern`. */
export function effects(dir: string, pattern: RegExp): { line: string; pid: number }[] {
  return readEffects<{ line: string; pid: number }>(join(dir, "effects.jsonl")).filter((e) =>
    pattern.test(e.line),
  );
}
