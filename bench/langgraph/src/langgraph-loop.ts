import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { stepsPerRun, type Workload } from "../../src/workload.js";

const echo = tool(async ({ n }) => `echo ${n}`, {
  name: "echo",
  description: "Returns its input.",
  schema: z.object({ n: z.number() }),
});

/**
 * The scripted model as a plain node function, the lighter of the two honest choices (a
 * FakeChatModel would add LangChain's runnable and callback layers, which a real model call
 * pays too but which are not the runtime). Like tenxgraph's ScriptedModel, the reply is chosen
 * by how many AI messages the thread already has. Call ids are unique in the thread
 * (`call_<turn>_<i>`): LangGraph's ToolNode skips a call whose id already has a tool message.
 */
function scriptedAgent(workload: Workload) {
  return function agent(state: typeof MessagesAnnotation.State) {
    const turn = state.messages.filter((m) => AIMessage.isInstance(m)).length;
    if (turn >= workload.turns) return { messages: [new AIMessage("done")] };
    const toolCalls = Array.from({ length: workload.toolsPerTurn }, (_, i) => ({
      id: `call_${turn}_${i + 1}`,
      name: "echo",
      args: { n: turn * 10 + i },
      type: "tool_call" as const,
    }));
    return { messages: [new AIMessage({ content: "", tool_calls: toolCalls })] };
  };
}

/**
 * The same ReAct loop as `buildApp` in LangGraph.js: a `StateGraph(MessagesAnnotation)` with the
 * scripted agent and a prebuilt `ToolNode`, `toolsCondition` routing to the tools or the end.
 */
export function buildLangGraphApp(
  workload: Workload,
  checkpointer: BaseCheckpointSaver = new MemorySaver(),
) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", scriptedAgent(workload))
    .addNode("tools", new ToolNode([echo]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}

/**
 * Runs one whole loop on a fresh thread with `durability: "sync"` (each step's checkpoint is
 * written before the next step starts, as tenxgraph's are); returns node steps and elapsed ms.
 * Throws unless the run produced exactly the expected messages: a broken loop must not be timed.
 */
export async function runLangGraphOnce(
  app: ReturnType<typeof buildLangGraphApp>,
  workload: Workload,
  threadId: string,
): Promise<{ steps: number; ms: number }> {
  const started = performance.now();
  const result = await app.invoke(
    { messages: [new HumanMessage("go")] },
    {
      configurable: { thread_id: threadId },
      durability: "sync",
      recursionLimit: workload.turns * 2 + 5,
    },
  );
  const ms = performance.now() - started;
  checkTranscript(result.messages, workload);
  return { steps: stepsPerRun(workload), ms };
}

/** The user's message, per turn an AI message and its tools' answers, then "done". */
function checkTranscript(messages: BaseMessage[], { turns, toolsPerTurn }: Workload): void {
  const expected = 1 + turns * (1 + toolsPerTurn) + 1;
  const toolAnswers = messages.filter((m) => ToolMessage.isInstance(m));
  const last = messages.at(-1);
  const lastTurn = (turns - 1) * 10 + toolsPerTurn - 1;
  if (
    messages.length !== expected ||
    toolAnswers.length !== turns * toolsPerTurn ||
    !AIMessage.isInstance(last) ||
    last.content !== "done" ||
    (turns > 0 && toolAnswers.at(-1)?.content !== `echo ${lastTurn}`)
  ) {
    throw new Error(
      `LangGraph run: ${messages.length} messages (${toolAnswers.length} tool answers), expected ${expected}`,
    );
  }
}
