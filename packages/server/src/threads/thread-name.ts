import type { Message } from "@tenxgraph/core";
import type { ServerContext } from "../http/server-context.js";

/**
 * The state field that keeps a thread's name, written with the thread's first checkpoint (the
 * run's start write), so a name needs no storage of its own and no extra write. Hidden from the
 * wire state and refused from clients' state edits; `thread_name` in thread listings reads it.
 */
export const THREAD_NAME_FIELD = "__thread_name__";

/**
 * The name the configured generator gives a new thread, from the texts of its first messages;
 * `undefined` without a generator, or when it fails (logged: a name is not worth a failed run).
 */
export async function generateThreadName(
  ctx: ServerContext,
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

/** The stored name of a thread, from its checkpoint's values. */
export function storedThreadName(values: Record<string, unknown>): string | null {
  const name = values[THREAD_NAME_FIELD];
  return typeof name === "string" ? name : null;
}
