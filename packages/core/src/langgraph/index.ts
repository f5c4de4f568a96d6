/**
 * LangGraph.js's spellings that the main entry does not have, so ported code changes its
 * imports and little else: `START` (`addEdge(START, "agent")` sets the entry point),
 * `toolsCondition`, and `MessagesZodState` (also as `MessagesAnnotation`). `StateGraph`,
 * `END`, `Command`, `Send`, `interrupt` and `ToolNode` come from `@tenxgraph/core` itself.
 * See docs/coming-from-langgraph.md.
 * @module
 */
export { START } from "../definition/edges.js";
export { toolsCondition } from "./tools-condition.js";
export { MessagesAnnotation, MessagesZodState } from "./messages-state.js";
