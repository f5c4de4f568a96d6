/**
 * The few parts of a Model Context Protocol client that `mcpTools` uses, declared here so this
 * package does not depend on `@modelcontextprotocol/sdk`: its `Client` fits as it is.
 */

/** Options of one MCP request. */
export interface McpRequestOptions {
  signal?: AbortSignal;
  /** Milliseconds before the client gives up on the request. */
  timeout?: number;
}

/** A tool as an MCP server lists it. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  /** The arguments' JSON Schema (an object schema). */
  inputSchema: Record<string, unknown>;
  /** Hints the server gives; `idempotentHint` and `readOnlyHint` help choose `onInDoubt`. */
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

/** One content block of an MCP tool result. */
export interface McpContent {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri: string; mimeType?: string; text?: string; blob?: string };
}

/** What an MCP tool call returns (the current shape, or the old `toolResult` one). */
export interface McpCallResult {
  content?: McpContent[];
  structuredContent?: unknown;
  isError?: boolean;
  toolResult?: unknown;
}

/** A connected MCP client, such as `Client` of `@modelcontextprotocol/sdk`. */
export interface McpClient {
  listTools(
    params?: { cursor?: string },
    options?: McpRequestOptions,
  ): Promise<{ tools: McpToolInfo[]; nextCursor?: string }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: McpRequestOptions,
  ): Promise<McpCallResult>;
}
