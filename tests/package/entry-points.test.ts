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
    values: ["DEFAULT_SQLITE_PATH", "SqliteCheckpointer", "SqliteStore"],
    types: ["SqliteCheckpointerOptions", "SqliteStoreOptions"],
  },
  "@tenxgraph/postgres": {
    values: [
      "PgCheckpointer",
      "PgStore",
      "applyMigrationSteps",
      "createHostPool",
      "hostDatabaseError",
      "withMigrationLock",
    ],
    types: ["HostPoolOptions", "MigrationStep", "PgCheckpointerOptions", "PgStoreOptions"],
  },
  "@tenxgraph/langchain": {
    values: [
      "fromLangChain",
      "fromLangChainMessages",
      "langchainInput",
      "langchainModel",
      "toLangChain",
      "toLangChainMessages",
    ],
    types: ["LangChainChatModel", "LangChainModelOptions"],
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
      "SWARM_NODES",
      "createHandoffTool",
      "createReactAgent",
      "createSupervisor",
      "createSwarm",
      "mcpTools",
      "resolveModel",
    ],
    types: [
      "AgentOptions",
      "CreateHandoffToolOptions",
      "CreateReactAgentOptions",
      "CreateSupervisorOptions",
      "CreateSwarmOptions",
      "LanguageModelObject",
      "McpCallResult",
      "McpClient",
      "McpContent",
      "McpInDoubtPolicy",
      "McpRequestOptions",
      "McpToolInfo",
      "McpToolsOptions",
      "ModelSpec",
      "PreModelHook",
      "PreModelHookResult",
      "PrepareMessages",
      "Prompt",
      "ProviderOptions",
      "ProviderSettings",
      "ReactAgentState",
      "ResponseFormat",
      "RetryOptions",
      "SupervisedAgent",
      "SwarmAgent",
      "SwarmState",
    ],
  },
  "@tenxgraph/server": {
    values: [
      "ApiError",
      "BEARER_PROTOCOL",
      "CronScheduler",
      "CronStore",
      "EVENT_ID_HEADER",
      "GRAPH_SOCKET_PATH",
      "InMemoryFileStore",
      "InMemoryMemoryStore",
      "PgRunStore",
      "RunEndedError",
      "RunEventFollower",
      "RunWorker",
      "SIGNATURE_HEADER",
      "ThreadBusyError",
      "TimerScheduler",
      "WebhookDeliverer",
      "attachGraphSocket",
      "createApp",
      "cronStore",
      "openApiDocument",
      "serve",
      "signWebhook",
      "verifyWebhook",
    ],
    types: [
      "AppOptions",
      "AuthOption",
      "AuthUser",
      "BackgroundRunEvent",
      "BackgroundRunStatus",
      "Authenticate",
      "CronSchedulerOptions",
      "ErrorDetail",
      "FileStore",
      "GraphSocketServer",
      "JwtAuthConfig",
      "MemoryFilter",
      "MemoryRecord",
      "MemoryStore",
      "MultitaskStrategy",
      "RunRecord",
      "RunService",
      "RunWorkerOptions",
      "RunningServer",
      "ServeOptions",
      "StoredFile",
      "StoredRunEvent",
      "TenxgraphApp",
      "ThreadNameGenerator",
      "TimerSchedulerOptions",
      "WebhookSettings",
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
      "StoreCalls",
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
      "ApiErrorCode",
      "BackgroundRun",
      "BackgroundRunStatus",
      "CallOptions",
      "ClearStateResult",
      "ClientErrorInit",
      "ContentBlock",
      "CreateCronBody",
      "CreateRunBody",
      "Cron",
      "CronDetail",
      "CronOptions",
      "CronTick",
      "DeleteAfterBody",
      "DeleteThreadResult",
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
      "InvokeInput",
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
      "RunMeta",
      "RunOptions",
      "RunStatus",
      "RunStreamEvent",
      "RunStreamOptions",
      "SetupResult",
      "SetupToolsBody",
      "StateEdit",
      "StateHistoryEntry",
      "StateJsonSchema",
      "StopBody",
      "StopResult",
      "StoreItemWire",
      "StoreNamespaceOptions",
      "StoreSearchOptions",
      "StreamChunk",
      "TenxgraphClientOptions",
      "TextBlock",
      "ThreadInfo",
      "ThreadStatus",
      "TokenSource",
      "UpdateStateBody",
      "WebhookDelivery",
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

/**
 * Names that more than one package exports, each the same thing on every side: the client's
 * wire form of a core record (snake_case fields over HTTP), or a wire type the server and the
 * client both write. A name meaning two things (the server's background `RunStatus` beside the
 * core's) is renamed instead; add a name here only when it is the same thing.
 */
const SHARED_NAMES: Record<string, string[]> = {
  BackgroundRunStatus: ["client", "server"],
  ContentBlock: ["client", "core"],
  ErrorDetail: ["client", "server"],
  InDoubtDecision: ["client", "core"],
  Interrupt: ["client", "core"],
  LedgerEntry: ["client", "core"],
  MultitaskStrategy: ["client", "server"],
  RemoteToolCall: ["client", "core"],
  RunStatus: ["client", "core"],
  StateHistoryEntry: ["client", "core"],
  ThreadStatus: ["client", "core"],
};

describe("names across packages", () => {
  it("are shared only where they mean the same thing", () => {
    const core = [
      "index.ts",
      "storage/index.ts",
      "host/index.ts",
      "testing/index.ts",
      "func/index.ts",
    ].map((entry) => `core/src/${entry}`);
    const packages: Record<string, string[]> = { core };
    for (const name of Object.keys(ENTRIES)) {
      packages[name.replace("@tenxgraph/", "")] = [
        `${name.replace("@tenxgraph/", "")}/src/index.ts`,
      ];
    }
    const owners = new Map<string, Set<string>>();
    for (const [pkg, files] of Object.entries(packages)) {
      for (const file of files) {
        const source = readFileSync(new URL(`../../packages/${file}`, import.meta.url), "utf8");
        const { values, types } = declaredExports(source);
        for (const name of [...values, ...types]) {
          owners.set(name, (owners.get(name) ?? new Set()).add(pkg));
        }
      }
    }
    const shared = Object.fromEntries(
      [...owners]
        .filter(([, pkgs]) => pkgs.size > 1)
        .map(([name, pkgs]) => [name, [...pkgs].sort()])
        .sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
    expect(shared).toEqual(SHARED_NAMES);
  });
});
