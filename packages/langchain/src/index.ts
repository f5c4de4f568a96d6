/**
 * LangChain interop for tenxgraph: our messages to LangChain's and back without loss, LangChain
 * messages as a graph's input, and a LangChain chat model as the model of an `Agent` or
 * `createReactAgent` (`@tenxgraph/models`).
 * @module
 */
export {
  fromLangChain,
  fromLangChainMessages,
  toLangChain,
  toLangChainMessages,
} from "./messages/convert-messages.js";
export { langchainInput } from "./messages/langchain-input.js";
export { langchainModel } from "./model/langchain-model.js";
export type { LangChainChatModel, LangChainModelOptions } from "./model/langchain-model.js";
