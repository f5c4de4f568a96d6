import { z } from "zod";
import { interrupt } from "../node/interrupt.js";
import { checkRemoteToolSpec, type RemoteToolSpec } from "../node/remote-tool-spec.js";
import type { AnyTool, ToolOutput } from "./tool.js";

/** `value.kind` of the interrupt a remote tool call raises. */
export const REMOTE_TOOL_CALL_KIND = "remote_tool_call";

/** What a remote tool call asks the caller: the interrupt's `value`. */
export interface RemoteToolCall {
  kind: typeof REMOTE_TOOL_CALL_KIND;
  toolCallId: string;
  name: string;
  args: Record<string, unknown>;
}

const remoteTools = new WeakSet<AnyTool>();

/**
 * A tool run by the caller instead of this process. A call pauses the run with an interrupt whose
 * value is a {@link RemoteToolCall}; resuming it with the caller's result (a value, or a tool
 * message `{ role: "tool", content, isError }`) completes the call. Like any call, the result is
 * recorded in the tool ledger as soon as it arrives, so a replay never asks the caller again.
 * Arguments are checked by the caller against its own schema, not here.
 *
 * @example
 * toolNode.attachRemoteTools([{ name: "get_location", parameters: { type: "object" } }]);
 * const r = await app.invoke(input, { threadId });          // status "interrupted"
 * await app.invoke({ resume: { lat: 52.5, lon: 13.4 }, interruptId: r.interrupts[0].id }, { threadId });
 */
export function remoteTool(spec: RemoteToolSpec): AnyTool {
  checkRemoteToolSpec(spec);
  // Providers want an object schema; clients often send `{}` for "no parameters".
  const parameters = { type: "object", ...spec.parameters };
  const name = spec.name;
  const made: AnyTool = Object.freeze({
    name,
    description: spec.description?.trim() || `Remote tool '${name}', run by the caller`,
    schema: z.record(z.string(), z.unknown()),
    timeout: null, // the pause is not the tool running: it waits for the next request
    idempotencyKey: undefined,
    onInDoubt: "retry" as const, // a re-run only asks again, or returns the answer already given
    execute(args: Record<string, unknown>, ctx: { toolCallId: string }): ToolOutput {
      const call: RemoteToolCall = {
        kind: REMOTE_TOOL_CALL_KIND,
        toolCallId: ctx.toolCallId,
        name,
        args,
      };
      return interrupt(call, { message: "Remote tool call - graph interrupted" });
    },
    jsonSchema: () => parameters,
  });
  remoteTools.add(made);
  return made;
}

/** True for a tool made by {@link remoteTool}. */
export function isRemoteTool(tool: AnyTool): boolean {
  return remoteTools.has(tool);
}

/** True when an interrupt's `value` is a {@link RemoteToolCall}. */
export function isRemoteToolCall(value: unknown): value is RemoteToolCall {
  return (value as { kind?: unknown } | null)?.kind === REMOTE_TOOL_CALL_KIND;
}

const NO_TOOLS: ReadonlyMap<string, AnyTool> = new Map();
const toolsOfRun = new WeakMap<readonly RemoteToolSpec[], ReadonlyMap<string, AnyTool>>();

/**
 * A run's remote tools by name, from the specs it carries (`RunConfig.remoteTools`, checked
 * before the run started). Made once per list, so every `ToolNode` of the run, and a subgraph's
 * child run, which shares the list, calls the same tools.
 */
export function remoteToolsOf(specs: readonly RemoteToolSpec[]): ReadonlyMap<string, AnyTool> {
  if (specs.length === 0) return NO_TOOLS;
  let tools = toolsOfRun.get(specs);
  if (!tools) {
    tools = new Map(specs.map((spec) => [spec.name, remoteTool(spec)]));
    toolsOfRun.set(specs, tools);
  }
  return tools;
}
