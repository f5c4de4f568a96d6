import {
  Message,
  silentLogger,
  type AnyTool,
  type AssistantMessage,
  type CompiledGraph,
  type CompileOptions,
} from "@tenxgraph/core";
import { supportAgent } from "@tenxgraph/core/testing";
import type { Checkpointer } from "@tenxgraph/core/storage";

/** The state of the suite's agents: the transcript only. */
export type AgentState = { messages: Message[] };

/** One tool call the scripted model asks for. */
export interface CallSpec {
  name: string;
  tag: string;
}

/** What {@link agentGraph} builds. */
export interface AgentGraphOptions {
  checkpointer: Checkpointer;
  tools: AnyTool[];
  /** The tool calls of each model reply after a user message; then the model answers in text. */
  turns: CallSpec[][];
  /**
   * Awaited before each model reply with the number of tool turns answered since the user's
   * message (`turns.length` for the final text reply): a test holds the model open here.
   */
  beforeReply?: (answered: number) => Promise<void>;
  /** Extra compile options (poll interval, claim staleness). */
  compile?: Omit<CompileOptions, "checkpointer">;
}

/**
 * The ReAct loop every worker of this suite runs: `MAIN` (a scripted model) and `TOOL` (a
 * `ToolNode`), as in the README. The model's reply depends only on the transcript since the
 * last user message, so any process continuing a thread gets the same replies.
 */
export function agentGraph(options: AgentGraphOptions): CompiledGraph<AgentState> {
  return supportAgent<AgentState>({
    model: async (state) => {
      await options.beforeReply?.(answeredTurns(state.messages));
      return reply(state.messages, options.turns);
    },
    tools: options.tools,
    logger: silentLogger,
    ...options.compile,
    checkpointer: options.checkpointer,
  });
}

/** How many model replies (each with tool calls) follow the last user message. */
function answeredTurns(messages: readonly Message[]): number {
  const lastUser = messages.findLastIndex((message) => message.role === "user");
  return messages.slice(lastUser + 1).filter((message) => message.role === "assistant").length;
}

function reply(messages: readonly Message[], turns: CallSpec[][]): AssistantMessage {
  const answered = answeredTurns(messages);
  const calls = turns[answered];
  if (!calls) return Message.assistant(`done after ${answered} tool turns`);
  return Message.assistant(
    "",
    calls.map((call, i) => ({
      id: `call_${i + 1}`,
      name: call.name,
      arguments: JSON.stringify({ tag: call.tag }),
    })),
  );
}
