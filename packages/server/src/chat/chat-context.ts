import type { InvokeContext } from "../invoke/invoke-context.js";
import type { LiveChats } from "./live-chats.js";

/** What the chat routes work with: running the graph, and this process's chat runs. */
export interface ChatContext extends InvokeContext {
  chats: LiveChats;
}
