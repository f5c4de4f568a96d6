import type { Message } from "@tenxgraph/core";
import type { ThreadsContext } from "./threads-context.js";

export { storedThreadName, THREAD_NAME_FIELD } from "../wire/thread-name-field.js";

/**
 * The name the configured generator gives a new thread, from the texts of its first messages;
 * `undefined` without a generator, or when it fails (logged: a name is not worth a failed run).
 */
export async function generateThreadName(
  ctx: ThreadsContext,
  threadId: string,
  messages: readonly Message[],
): Promise<string | undefined> {
  if (ctx.threadNames === null) return undefined;
  const texts = messages.map((m) =>
    typeof m.content === "string"
      ? m.content
      : m.content.map((b) => (b.type === "text" ? b.text : "")).join(""),
  );
  try {
    const name = await ctx.threadNames(texts);
    if (typeof name === "string" && name.trim() !== "") return name;
    ctx.logger.warn({ threadId }, "The thread name generator gave no name");
  } catch (error) {
    ctx.logger.warn({ err: error, threadId }, "The thread name generator failed");
  }
  return undefined;
}
