import type { ContentBlock, ToolOutput } from "@tenxgraph/core";
import type { McpCallResult, McpContent } from "./mcp-client.js";

/**
 * An MCP tool result as a tenxgraph tool output: text when every block is text (what models
 * read best), content blocks when there are images or files, the structured value when the
 * server sent only that. A result flagged `isError` throws, so the `ToolNode` reports it to the
 * model as `TOOL_ERROR_001` exactly like a local tool that threw.
 */
export function toToolOutput(toolName: string, result: McpCallResult): ToolOutput {
  if (!("content" in result) && "toolResult" in result) return result.toolResult;
  const blocks = (result.content ?? []).map(toContentBlock);
  if (result.isError) {
    const text = blocks.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n");
    throw new Error(text || `MCP tool '${toolName}' reported an error without a message`);
  }
  if (blocks.length === 0) return result.structuredContent ?? "";
  if (blocks.every((b) => b.type === "text")) {
    return blocks.map((b) => (b.type === "text" ? b.text : "")).join("\n");
  }
  return blocks;
}

function toContentBlock(content: McpContent): ContentBlock {
  switch (content.type) {
    case "text":
      return { type: "text", text: content.text ?? "" };
    case "image":
      return { type: "image", data: content.data ?? "", mediaType: mimeOf(content) };
    case "audio":
      return { type: "file", data: content.data ?? "", mediaType: mimeOf(content) };
    case "resource":
      return resourceBlock(content.resource);
    case "resource_link":
      return {
        type: "text",
        text: `Resource ${content.name ?? ""} at ${content.uri ?? ""}`.trim(),
      };
    default:
      // A block type newer than this code: keep it readable rather than drop it.
      return { type: "text", text: JSON.stringify(content) };
  }
}

function resourceBlock(resource: McpContent["resource"]): ContentBlock {
  if (!resource) return { type: "text", text: "" };
  if (resource.text !== undefined) return { type: "text", text: resource.text };
  return {
    type: "file",
    data: resource.blob ?? "",
    mediaType: resource.mimeType ?? "application/octet-stream",
    filename: resource.uri,
  };
}

function mimeOf(content: McpContent): string {
  return content.mimeType ?? "application/octet-stream";
}
