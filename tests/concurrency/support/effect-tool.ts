import { tool } from "@tenxgraph/core";
import type { AnyTool, ToolContext } from "@tenxgraph/core";
import { z } from "zod";
import { appendEffect } from "./effect-log.js";

/** What {@link effectTool} builds. */
export interface EffectToolOptions {
  name: string;
  /** The external log its effect is appended to. */
  logPath: string;
  /** Runs after the effect is logged and before the tool returns: a test holds the call open here. */
  hold?: (ctx: ToolContext) => Promise<void>;
}

/**
 * A tool whose side effect is one `start` line in the external log, written the moment its
 * body begins: a line per key is a run of that call, whatever the store later says about it.
 */
export function effectTool({ name, logPath, hold }: EffectToolOptions): AnyTool {
  return tool({
    name,
    description: `Appends a '${name}' effect to the external log.`,
    schema: z.object({ tag: z.string() }),
    async execute(args, ctx) {
      const key = `${ctx.messageId}:${ctx.toolCallId}`;
      const { threadId, runId } = ctx;
      appendEffect(logPath, { event: "start", threadId, key, tool: name, pid: process.pid, runId });
      await hold?.(ctx);
      return `${name} ${args.tag} done`;
    },
  });
}
