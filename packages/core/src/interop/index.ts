/**
 * For packages that speak another framework's message format: LangChain's serialized messages
 * (`BaseMessage.toDict()`'s shape, what the LangGraph API sends) to ours and back, without
 * loss. The server's LangGraph API and `@tenxgraph/langchain` share it; it is plain JSON, so
 * the core imports no LangChain package.
 * @module
 */
export { LcMessageError, fromLcMessage, toLcMessage } from "../messages/lc-messages.js";
export type { LcExtras, LcMessage } from "../messages/lc-messages.js";
