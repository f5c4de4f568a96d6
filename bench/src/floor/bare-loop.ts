import { Message, type AssistantMessage } from "@tenxgraph/core";
import type { Workload } from "../workload.js";

/**
 * The floor: the same ReAct loop with no runtime at all. The scripted model's replies and the
 * tools' work are the same; there is no store, ledger, deadline, event or copy. tenxgraph's
 * figure divided by this one is what the runtime costs relative to the work itself.
 */
export async function runBare(workload: Workload): Promise<{ steps: number; ms: number }> {
  const started = performance.now();
  const messages: Message[] = [Message.user("go")];
  for (let turn = 0; turn <= workload.turns; turn++) {
    const reply: AssistantMessage =
      turn < workload.turns
        ? Message.assistant(
            "",
            Array.from({ length: workload.toolsPerTurn }, (_, i) => ({
              id: `call_${i + 1}`,
              name: "echo",
              arguments: JSON.stringify({ n: turn * 10 + i }),
            })),
          )
        : Message.assistant("done");
    messages.push(reply);
    if (!reply.toolCalls) break;
    const results = await Promise.all(
      reply.toolCalls.map(async (call) => {
        const args = JSON.parse(call.arguments) as { n: number };
        return Message.tool(call.id, `echo ${args.n}`);
      }),
    );
    messages.push(...results);
  }
  return { steps: workload.turns * 2 + 1, ms: performance.now() - started };
}
