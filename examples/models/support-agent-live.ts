/**
 * The support agent on a real model when a key is set, on the scripted model otherwise.
 * The run is streamed (model tokens arrive as `message_delta` events), the worker "dies" right
 * after charge_card is recorded, and `stream(null, ...)` continues the thread: the model is not
 * asked again for the step it answered, and the card is charged once.
 *
 *   npm run example:models                          # scripted, no network
 *   OPENAI_API_KEY=sk-... npm run example:models    # gpt-4o-mini
 */
import {
  END,
  Message,
  StateGraph,
  ToolNode,
  silentLogger,
  type AssistantMessage,
  type RunInput,
  type BaseState,
} from "@tenxgraph/core";
import { FaultPoints, SUPPORT_SCRIPT, ScriptedModel, supportTools } from "@tenxgraph/core/testing";
import { Agent } from "@tenxgraph/models";

// The one string to change: "openai/gpt-4o-mini", "anthropic/claude-haiku-4-5", or "scripted".
const MODEL = process.env.OPENAI_API_KEY
  ? "openai/gpt-4o-mini"
  : process.env.ANTHROPIC_API_KEY
    ? "anthropic/claude-haiku-4-5"
    : "scripted";

const outside: string[] = []; // what reached the outside world: the payment provider, the mailer
// The mailer answers after the charge: the charge is recorded as it returns, then the worker dies.
const tools = supportTools({ outside: (line) => outside.push(line), mailerDelayMs: 50 });

const model =
  MODEL === "scripted"
    ? new ScriptedModel(SUPPORT_SCRIPT)
    : new Agent({
        model: MODEL,
        tools,
        systemPrompt:
          "You are a support agent. Order 4821 costs 4200 cents. Charge it with charge_card " +
          "and email the receipt with send_receipt, calling both tools in one reply.",
      });

// The worker dies right after charge_card returned and was recorded, mid tool node.
const crash = new FaultPoints().arm(
  "ledger.after_record",
  () => {
    throw new Error("worker killed");
  },
  { when: (at) => at.toolName === "charge_card", times: 1 },
);
const app = new StateGraph()
  .addNode("MAIN", model)
  .addNode("TOOL", new ToolNode(tools))
  .addConditionalEdges("MAIN", (state) => (state.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
  .addEdge("TOOL", "MAIN")
  .setEntryPoint("MAIN")
  .compile({ faultPoints: crash, logger: silentLogger });

const config = { threadId: "order-4821", toolTimeout: 60, nodeTimeout: 300 };

/** Streams one run, printing tokens as they arrive and each tool call as it settles. */
async function show(input: RunInput<BaseState>): Promise<string | undefined> {
  try {
    for await (const event of app.stream(input, config)) {
      if (event.type === "message_delta") process.stdout.write(event.delta);
      if (event.type === "message" && event.message.role === "assistant") {
        const reply = event.message as AssistantMessage;
        if (Message.text(reply)) process.stdout.write("\n");
        const calls = reply.toolCalls?.map((c) => c.name).join(", ");
        if (calls) console.log(`model asks for: ${calls}`);
        if (reply.usage) console.log(`tokens: ${JSON.stringify(reply.usage)}`);
      }
      if (event.type === "tool_result") {
        console.log(`  ${event.toolName}${event.replayed ? " (replayed from the ledger)" : ""}`);
      }
      if (event.type === "run_end") return event.status;
    }
  } catch (error) {
    console.log(`crashed: ${(error as Error).message}`);
  }
  return undefined;
}

console.log(
  `model: ${MODEL}${MODEL === "scripted" ? " (set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)" : ""}`,
);
let status = await show({
  messages: [Message.user("Please charge order 4821 and email me the receipt.")],
});
if (status === undefined) status = await show(null); // continue: finished calls replay from the ledger
console.log("status:", status);
for (const e of await app.getToolLedger(config))
  console.log("ledger:", e.toolName, e.status, "attempt", e.attempt);
for (const line of outside) console.log("outside world:", line); // one charge, one receipt
