import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
  type MessageContent,
} from "@langchain/core/messages";
import type {
  LanguageModelV3FilePart,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
} from "@ai-sdk/provider";

type ContentPart = Exclude<MessageContent, string>[number];

/**
 * The AI SDK's prompt (what the Agent sends: our transcript as the SDK's messages) as LangChain's
 * messages: text and media as content blocks, tool calls with their ids and parsed arguments,
 * tool results with `tool_call_id` and `status`.
 */
export function promptToLangChain(prompt: LanguageModelV3Prompt): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (const message of prompt) {
    switch (message.role) {
      case "system":
        messages.push(new SystemMessage(message.content));
        break;
      case "user":
        messages.push(
          new HumanMessage({
            content: message.content.map((part) =>
              part.type === "text" ? { type: "text", text: part.text } : mediaBlock(part),
            ),
          }),
        );
        break;
      case "assistant": {
        let text = "";
        const toolCalls = [];
        for (const part of message.content) {
          if (part.type === "text") text += part.text;
          if (part.type === "tool-call") {
            toolCalls.push({
              id: part.toolCallId,
              name: part.toolName,
              args: argsObject(part.input),
              type: "tool_call" as const,
            });
          }
        }
        messages.push(new AIMessage({ content: text, tool_calls: toolCalls }));
        break;
      }
      case "tool":
        for (const part of message.content) {
          if (part.type !== "tool-result") continue;
          const { content, isError } = toolOutput(part.output);
          messages.push(
            new ToolMessage({
              content,
              tool_call_id: part.toolCallId,
              name: part.toolName,
              status: isError ? "error" : "success",
            }),
          );
        }
        break;
    }
  }
  return messages;
}

/** An image as the `image_url` block every LangChain chat model reads; other files as files. */
function mediaBlock(part: LanguageModelV3FilePart): ContentPart {
  const url =
    part.data instanceof URL
      ? part.data.href
      : `data:${part.mediaType};base64,${
          typeof part.data === "string" ? part.data : Buffer.from(part.data).toString("base64")
        }`;
  if (part.mediaType.startsWith("image/")) return { type: "image_url", image_url: { url } };
  return {
    type: "file",
    mimeType: part.mediaType,
    ...(part.data instanceof URL ? { url } : { data: url.slice(url.indexOf(",") + 1) }),
    ...(part.filename !== undefined && { metadata: { filename: part.filename } }),
  } as ContentPart;
}

/** Tool call input as LangChain's `args` object (the SDK parsed it; raw text stays text). */
function argsObject(input: unknown): Record<string, unknown> {
  if (typeof input === "object" && input !== null && !Array.isArray(input)) {
    return input as Record<string, unknown>;
  }
  if (typeof input === "string") {
    try {
      const parsed: unknown = JSON.parse(input);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        return parsed as Record<string, unknown>;
      }
    } catch {
      // not JSON: handed over as the text it is
    }
  }
  return { input };
}

function toolOutput(output: LanguageModelV3ToolResultOutput): {
  content: string;
  isError: boolean;
} {
  switch (output.type) {
    case "text":
      return { content: output.value, isError: false };
    case "error-text":
      return { content: output.value, isError: true };
    case "json":
      return { content: JSON.stringify(output.value), isError: false };
    case "error-json":
      return { content: JSON.stringify(output.value), isError: true };
    case "execution-denied":
      return { content: output.reason ?? "The tool call was denied", isError: true };
    case "content":
      return {
        content: output.value.map((p) => (p.type === "text" ? p.text : "")).join(""),
        isError: false,
      };
  }
}
