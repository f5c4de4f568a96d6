import {
  END,
  StateGraph,
  ToolNode,
  type AnyTool,
  type CompileOptions,
  type GraphNode,
  type BaseState,
  type StreamEvent,
} from "@tenxgraph/core";

export { recordingLogger } from "@tenxgraph/core/testing";

/** The model–tools loop of the seed's support agent around any model node. */
export function modelToolLoop(
  model: GraphNode<BaseState>,
  tools: readonly AnyTool[],
  options: CompileOptions = {},
) {
  return new StateGraph<BaseState>()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode(tools))
    .addConditionalEdges("MAIN", (state) =>
      state.messages.at(-1)?.toolCalls?.length ? "TOOL" : END,
    )
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile(options);
}

/** Every event of a stream, and the error it ended with, if any. */
export async function collect(
  stream: AsyncIterable<StreamEvent>,
): Promise<{ events: StreamEvent[]; error: unknown }> {
  const events: StreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}
