import type { PreparedRun } from "./run-request.js";
import type { ServerContext } from "./server-context.js";

/** The name the configured generator gives a new thread, from the texts of its first messages. */
export async function threadName(
  ctx: ServerContext,
  run: PreparedRun,
): Promise<string | undefined> {
  if (!run.isNewThread || ctx.threadNames === null) return undefined;
  const texts = run.inputMessages.map((m) =>
    typeof m.content === "string"
      ? m.content
      : m.content.map((b) => (b.type === "text" ? b.text : "")).join(""),
  );
  try {
    return await ctx.threadNames(texts);
  } catch (error) {
    ctx.logger.warn({ err: error, threadId: run.threadId }, "The thread name generator failed");
    return undefined;
  }
}
