import { z } from "zod";
import { interrupt } from "../runtime/interrupt.js";
import type { AnyTool, ToolOutput } from "./tool.js";

/** `value.kind` of the interrupt a remote tool call raises. */
export const REMOTE_TOOL_CALL_KIND = "remote_tool_call";

/** A tool the caller runs (a client, a browser): name, description and JSON Schema parameters. */
export interface RemoteToolSpec {
  /** Letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  description?: string;
  /** The arguments' JSON Schema, sent to the model as is (default: any object). */
  parameters?: Record<string, unknown>;
}

/** What a remote tool call asks the caller: the interrupt's `value`. */
export interface RemoteToolCall {
  kind: typeof REMOTE_TOOL_CALL_KIND;
  toolCallId: string;
  name: string;
  args: Record<string, unknown>;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
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
  checkSpec(spec);
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

function checkSpec(spec: RemoteToolSpec): void {
  const name = (spec as Partial<RemoteToolSpec> | null)?.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new TypeError(`remoteTool('${name}'): name must be 1-64 letters, digits, '_' or '-'`);
  }
  const { parameters, description } = spec;
  if (
    parameters !== undefined &&
    (typeof parameters !== "object" || parameters === null || Array.isArray(parameters))
  ) {
    throw new TypeError(`remoteTool('${name}'): parameters must be a JSON Schema object`);
  }
  if (description !== undefined && typeof description !== "string") {
    throw new TypeError(`remoteTool('${name}'): description must be a string`);
  }
}
