import { Command, Message, tool, type AnyTool } from "@tenxgraph/core";
import { z } from "zod";

/** What {@link createHandoffTool} is built from (LangGraph.js's names). */
export interface CreateHandoffToolOptions {
  /** The agent to hand the conversation to: its node name in the swarm. */
  agentName: string;
  /** The tool's name; default `transfer_to_<agent name>` (lower case, spaces as `_`). */
  name?: string;
  /** What the model is told the tool does; default `Ask agent '<agent name>' for help`. */
  description?: string;
}

/**
 * A tool that hands the conversation to another agent of a swarm (LangGraph.js's
 * `createHandoffTool`): it answers its call with `Successfully transferred to <agent>` and
 * returns `new Command({ graph: Command.PARENT, goto: agentName, update: { activeAgent } })`.
 * Like any tool call it goes through the agent's ledger: after a crash the handoff replays
 * from its record. The agent must run inside a swarm (or another graph as a subgraph).
 *
 * @example
 * const alice = createReactAgent({ model, tools: [add, createHandoffTool({ agentName: "Bob" })], name: "Alice" });
 */
export function createHandoffTool(options: CreateHandoffToolOptions): AnyTool {
  const { agentName, name = defaultToolName(agentName), description } = options;
  return tool({
    name,
    description: description ?? `Ask agent '${agentName}' for help`,
    schema: z.object({}),
    execute: (_args, ctx) =>
      new Command({
        graph: Command.PARENT,
        goto: agentName,
        update: {
          activeAgent: agentName,
          messages: [Message.tool(ctx.toolCallId, `Successfully transferred to ${agentName}`)],
        },
      }),
  }) as unknown as AnyTool;
}

function defaultToolName(agentName: string): string {
  if (typeof agentName !== "string" || agentName.trim() === "") {
    throw new TypeError("createHandoffTool: agentName must name an agent of the swarm");
  }
  return `transfer_to_${agentName.trim().replace(/\s+/g, "_").toLowerCase()}`;
}
