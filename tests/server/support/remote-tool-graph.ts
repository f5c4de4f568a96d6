import { z } from "zod";
import {
  END,
  Message,
  StateGraph,
  ToolNode,
  silentLogger,
  tool,
  type BaseState,
  type CompiledGraph,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";

/**
 * A graph for remote tools: the user writes `use a, b` and MAIN calls tools `a` and `b` (each
 * with `{ "n": <position> }`); once the tools answered, it says what they returned. TOOL has one
 * tool of its own, `local_clock`.
 */
export function remoteToolGraph(checkpointer: Checkpointer): CompiledGraph<BaseState> {
  const clock = tool({
    name: "local_clock",
    description: "The time.",
    schema: z.object({}),
    execute: () => "noon",
  });
  const model = (state: BaseState) => {
    const last = state.messages.at(-1)!;
    if (last.role === "tool") {
      const results = state.messages
        .slice(state.messages.findLastIndex((m) => m.role === "assistant") + 1)
        .map((m) => `${Message.text(m)}${m.role === "tool" && m.isError ? " (failed)" : ""}`);
      return Message.assistant(`results: ${results.join(" | ")}`);
    }
    const names = /use (.+)/.exec(Message.text(last))?.[1]?.split(",") ?? [];
    if (names.length === 0) return Message.assistant("nothing to do");
    return Message.assistant(
      "",
      names.map((name, i) => ({
        id: `call_${i + 1}`,
        name: name.trim(),
        arguments: JSON.stringify({ n: i + 1 }),
      })),
    );
  };
  return new StateGraph()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode([clock]))
    .addConditionalEdges("MAIN", (s) => (s.messages.at(-1)?.toolCalls?.length ? "TOOL" : END))
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger }) as never;
}
