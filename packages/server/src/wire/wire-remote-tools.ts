import type { WireMessage } from "@tenxgraph/client";
import type { Interrupt } from "@tenxgraph/core";
import { isRemoteToolCall } from "@tenxgraph/core/host";
import { z } from "zod";

const parameters = z.record(z.string(), z.unknown());

/**
 * One entry of `config.remote_tools`: OpenAI's `{ type: "function", function: {...} }` or the
 * flat `{ name, description, parameters }`.
 */
export const remoteToolConfigSchema = z.union([
  z.object({
    type: z.literal("function"),
    function: z.object({
      name: z.string().min(1),
      description: z.string().optional(),
      parameters: parameters.optional(),
    }),
  }),
  z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: parameters.optional(),
  }),
]);

/**
 * 10xGraph's placeholder for a remote call: a tool message with one `remote_tool_call` block,
 * which its client runs and answers with a `tool_result`. Never stored: the pending interrupt is
 * the record.
 */
export function remotePlaceholders(interrupts: readonly Interrupt[]): WireMessage[] {
  return interrupts.flatMap((i) => {
    if (!isRemoteToolCall(i.value)) return [];
    const call = i.value;
    return [
      {
        message_id: `remote:${i.id}`,
        role: "tool",
        content: [
          {
            type: "remote_tool_call",
            id: call.toolCallId,
            name: call.name,
            args: call.args,
            tool_type: "remote",
          },
        ],
        delta: false,
        tools_calls: null,
        reasoning: null,
        timestamp: Date.now() / 1000,
        metadata: { is_remote: true, interrupt_id: i.id },
        usages: null,
        raw: null,
        parsed_content: null,
      },
    ];
  });
}
