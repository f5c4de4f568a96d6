import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * The names each package's entry point exports, written out (those of @tenxgraph/core, with its
 * storage and testing entries, are in packages/core/src/entry-points.test.ts): adding, removing
 * or renaming a name fails here, so every change to a public API is seen in review. Update the
 * lists on purpose.
 */
const ENTRIES: Record<string, { values: string[]; types: string[] }> = {
  "@tenxgraph/sqlite": {
    values: ["DEFAULT_SQLITE_PATH", "SqliteCheckpointer"],
    types: ["SqliteCheckpointerOptions"],
  },
  "@tenxgraph/postgres": {
    values: [
      "PgCheckpointer",
      "applyMigrationSteps",
      "createHostPool",
      "hostDatabaseError",
      "withMigrationLock",
    ],
    types: ["HostPoolOptions", "MigrationStep", "PgCheckpointerOptions"],
  },
  "@tenxgraph/models": {
    values: [
      "Agent",
      "DEFAULT_REQUEST_TIMEOUT_SECONDS",
      "DEFAULT_RETRY",
      "MCP_IDEMPOTENCY_KEY_META",
      "MODEL_PROVIDERS",
      "REACT_AGENT_NODES",
      "SUPERVISOR_NODES",
      "createReactAgent",
      "createSupervisor",
      "mcpTools",
      "resolveModel",
    ],
    types: [
      "AgentOptions",
      "CreateReactAgentOptions",
      "CreateSupervisorOptions",
      "LanguageModelObject",
      "McpCallResult",
      "McpClient",
      "McpContent",
      "McpInDoubtPolicy",
      "McpRequestOptions",
      "McpToolInfo",
      "McpToolsOptions",
      "ModelSpec",
      "PrepareMessages",
      "ProviderOptions",
      "ProviderSettings",
      "RetryOptions",
      "SupervisedAgent",
    ],
  },
  "@tenxgraph/server": {
    values: [
      "ApiError",
      "BEARER_PROTOCOL",
      "GRAPH_SOCKET_PATH",
      "InMemoryFileStore",
      "InMemoryMemoryStore",
      "PgRunStore",
      "RunEndedError",
      "RunEventFollower",
      "RunWorker",
      "ThreadBusyError",
      "attachGraphSocket",
      "createApp",
      "openApiDocument",
      "serve",
    ],
    types: [
      "AppOptions",
      "AuthOption",
      "AuthUser",
      "Authenticate",
      "ErrorDetail",
      "FileStore",
      "GraphSocketServer",
      "JwtAuthConfig",
      "MemoryFilter",
      "MemoryRecord",
      "MemoryStore",
      "MultitaskStrategy",
      "RunEvent",
      "RunRecord",
      "RunService",
      "RunStatus",
      "RunWorkerOptions",
      "RunningServer",
      "ServeOptions",
      "StoredFile",
      "StoredRunEvent",
      "TenxgraphApp",
      "ThreadNameGenerator",
    ],
  },
  "@tenxgraph/client": {
    values: [
      "AuthenticationError",
      "BadRequestError",
      "ChunkStream",
      "ConflictError",
      "ConnectionError",
      "NotFoundError",
      "PayloadTooLargeError",
      "PermissionDeniedError",
      "RunEventStream",
      "ServerError",
      "TenxgraphClient",
      "TenxgraphClientError",
      "ValidationError",
      "isClientError",
      "messageText",
      "ndjsonLines",
      "remoteToolCalls",
      "toolResult",
      "userMessage",
    ],
    types: [
      "AddMessagesBody",
      "AddMessagesResult",
      "BackgroundRun",
      "BackgroundRunStatus",
      "CallOptions",
      "ClearStateResult",
      "ClientErrorInit",
      "ContentBlock",
      "CreateRunBody",
      "DeleteAfterBody",
      "DeleteThreadResult",
      "ErrorCode",
      "ErrorDetail",
      "ExecutionMeta",
      "Granularity",
      "GraphInfo",
      "GraphInputBody",
      "GraphTools",
      "InDoubtCall",
      "InDoubtDecision",
      "InDoubtDecisionResult",
      "Interrupt",
      "InvokeResult",
      "LedgerEntry",
      "MessageInput",
      "MessageRole",
      "MultitaskStrategy",
      "PageOptions",
      "PruneHistoryBody",
      "PutStateBody",
      "QueuedRun",
      "RemoteToolCall",
      "RemoteToolDefinition",
      "RunInput",
      "RunMeta",
      "RunOptions",
      "RunStatus",
      "RunStreamEvent",
      "RunStreamOptions",
      "SetupResult",
      "SetupToolsBody",
      "StateEdit",
      "StateHistoryEntry",
      "StateSchema",
      "StopBody",
      "StopResult",
      "StreamChunk",
      "TenxgraphClientOptions",
      "TextBlock",
      "ThreadInfo",
      "ThreadStatus",
      "TokenSource",
      "UpdateStateBody",
      "WireMessage",
      "WireState",
      "WireToolCall",
    ],
  },
};

/** The names an `index.ts` exports, split into values and types, as written. */
function declaredExports(source: string): { values: string[]; types: string[] } {
  const values: string[] = [];
  const types: string[] = [];
  for (const [, typeOnly, list] of source.matchAll(/export\s+(type\s+)?\{([^}]*)\}\s*from/g)) {
    for (const item of list!.split(",").map((part) => part.trim())) {
      if (item === "") continue;
      const isType = typeOnly !== undefined || item.startsWith("type ");
      const name = item
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)
        .at(-1)!;
      (isType ? types : values).push(name);
    }
  }
  return { values: values.sort(), types: types.sort() };
}

describe.each(Object.entries(ENTRIES))("%s", (name, expected) => {
  const folder = name.replace("@tenxgraph/", "");
  const source = readFileSync(
    new URL(`../../packages/${folder}/src/index.ts`, import.meta.url),
    "utf8",
  );

  it("exports exactly the listed names, each by name", () => {
    expect(source).not.toMatch(/export\s+\*|export\s+(const|let|function|class|interface)\s/);
    expect(declaredExports(source)).toEqual({
      values: [...expected.values].sort(),
      types: [...expected.types].sort(),
    });
  });

  it("loads with exactly the listed values", async () => {
    const loaded: Record<string, unknown> = await import(name);
    expect(Object.keys(loaded).sort()).toEqual([...expected.values].sort());
  });
});
