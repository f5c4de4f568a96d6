import {
  END,
  StateGraph,
  ToolNode,
  type AnyTool,
  type CompileOptions,
  type GraphNode,
  type BaseState,
  type Logger,
  type StreamEvent,
} from "@tenxgraph/core";

/** One log record a {@link recordingLogger} kept. */
export interface LogRecord {
  level: "debug" | "info" | "warn" | "error";
  fields: Record<string, unknown>;
  message: string | undefined;
}

/** A pino-shaped logger that keeps its records, for assertions on what was logged. */
export function recordingLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const write = (level: LogRecord["level"]) => (fields: object, message?: string) => {
    records.push({ level, fields: { ...fields } as Record<string, unknown>, message });
  };
  return {
    records,
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
  };
}

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
