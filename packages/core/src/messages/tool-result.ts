import { inspect } from "node:util";
import type { ErrorCode } from "../errors/codes.js";
import { Message, type ContentBlock, type ToolMessage } from "./message.js";

/** Turns what a tool returned into the tool message the model reads. */
export function toToolMessage(output: unknown, toolCallId: string): ToolMessage {
  if (isToolMessage(output)) {
    return Message.tool(toolCallId, output.content, { isError: output.isError === true });
  }
  return Message.tool(toolCallId, toContent(output));
}

/** The message of a failed call: `Tool '<name>' failed: [<CODE>] <message>`. */
export function toolErrorMessage(
  toolName: string,
  toolCallId: string,
  code: ErrorCode,
  message: string,
): ToolMessage {
  return Message.tool(toolCallId, `Tool '${toolName}' failed: [${code}] ${message}`, {
    isError: true,
  });
}

function toContent(output: unknown): string | ContentBlock[] {
  if (typeof output === "string") return output;
  if (output === undefined) return "";
  if (Array.isArray(output) && output.length > 0 && output.every(isContentBlock)) return output;
  try {
    return JSON.stringify(output) ?? String(output);
  } catch {
    // A BigInt or a cyclic SDK response: the tool did act, so its result must not turn into a
    // failure; the model gets a readable rendering instead of JSON.
    return inspect(output, { depth: 4, breakLength: Infinity });
  }
}

function isToolMessage(value: unknown): value is ToolMessage {
  const v = value as Partial<ToolMessage> | null;
  return typeof v === "object" && v !== null && v.role === "tool" && "content" in v;
}

function isContentBlock(value: unknown): value is ContentBlock {
  const type = (value as { type?: unknown } | null)?.type;
  return type === "text" || type === "image" || type === "file";
}
