import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import type { Message } from "../messages/message.js";

/**
 * LangGraph.js's `toolsCondition`, a router: `"tools"` when the last message asks for tool
 * calls, else `END`. With nodes named otherwise, map it:
 * `addConditionalEdges("MAIN", toolsCondition, { tools: "TOOL", [END]: END })`.
 */
export function toolsCondition(state: BaseState | readonly Message[]): "tools" | typeof END {
  const messages = Array.isArray(state) ? state : (state as BaseState).messages;
  const last = messages.at(-1);
  return last?.role === "assistant" && (last.toolCalls?.length ?? 0) > 0 ? "tools" : END;
}
