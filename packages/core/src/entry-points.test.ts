import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * The names each entry point of @tenxgraph/core exports, written out: adding, removing or
 * moving a name fails here, so every change to the public API is seen in review. Update the
 * lists on purpose, never by copying the output.
 */
const ENTRIES = {
  ".": {
    path: "./index.ts",
    values: [
      "Command",
      "CompiledGraph",
      "END",
      "ERROR_CODES",
      "IN_DOUBT_INTERRUPT_KIND",
      "InMemoryCheckpointer",
      "LANGGRAPH_OPTION_HINTS",
      "METER_NAME",
      "Message",
      "ModelError",
      "REMOVE_ALL_MESSAGES",
      "Send",
      "StateGraph",
      "Subgraph",
      "TenxgraphError",
      "ToolNode",
      "appendMessages",
      "interrupt",
      "isTenxgraphError",
      "jsonLogger",
      "remoteTool",
      "requireKnownOptions",
      "silentLogger",
      "tool",
      "trimMessages",
    ],
    types: [
      "AnyCompiledGraph",
      "AnyTool",
      "AssistantMessage",
      "BaseState",
      "CompileOptions",
      "DefaultState",
      "ContentBlock",
      "ErrorCode",
      "GraphNode",
      "InDoubtDecision",
      "InDoubtPolicy",
      "InMemoryCheckpointerOptions",
      "Interrupt",
      "Logger",
      "MessagesChunk",
      "MessageUpdate",
      "NodeContext",
      "NodeFunction",
      "NodeLike",
      "NodeOptions",
      "NodeOutput",
      "OptionHints",
      "Reducer",
      "Reducers",
      "RemoteToolSpec",
      "ResumeInput",
      "Role",
      "Router",
      "RunConfig",
      "RunInput",
      "RunResult",
      "RunStatus",
      "StateHistoryEntry",
      "StateOf",
      "StateSchema",
      "StateUpdate",
      "StreamConfig",
      "StreamEvent",
      "StreamMode",
      "StreamOutput",
      "SubgraphOptions",
      "SystemMessage",
      "ThreadState",
      "TokenUsage",
      "Tool",
      "ToolCall",
      "ToolContext",
      "ToolDefinition",
      "ToolMessage",
      "ToolOutput",
      "ToolStateUpdate",
      "StateWrite",
      "TrimMessagesOptions",
      "UpdateStateOptions",
      "UserMessage",
    ],
  },
  "./storage": {
    path: "./storage/index.ts",
    values: [
      "BaseCheckpointer",
      "ClaimLostError",
      "MAX_ID_LENGTH",
      "StaleStateError",
      "StorageError",
      "StorageSchemaError",
      "ThreadCopyError",
      "ThreadOwnerError",
      "childRanges",
      "copyRefusal",
      "decodeCheckpointRecord",
      "encodeCheckpointRecord",
      "isPrefix",
      "ledgerEntryFromRow",
      "prefixRanges",
      "rangeSeqs",
      "rangesLength",
      "requireWellFormed",
      "seqsHeldByAny",
      "seqsToRanges",
      "sliceRanges",
    ],
    types: [
      "AttemptRef",
      "CheckpointRead",
      "CheckpointRecord",
      "CheckpointWrite",
      "Checkpointer",
      "ClaimResult",
      "CompletedLedgerEntry",
      "CopySource",
      "EncodedCheckpointRecord",
      "Frontier",
      "FrontierTask",
      "GraphVersion",
      "HistoryOptions",
      "InterruptedLedgerEntry",
      "LedgerClaim",
      "LedgerCompletion",
      "LedgerEntry",
      "LedgerRow",
      "LedgerStatus",
      "MessagePage",
      "Page",
      "SeqRanges",
      "StartedLedgerEntry",
      "StepCommit",
      "StepLedgerWrites",
      "StepWrite",
      "StoreWrite",
      "ThreadCheckpoint",
      "ThreadCopyRefusal",
      "ThreadFilter",
      "ThreadStatus",
      "ThreadSummary",
      "VersionPage",
      "VersionRange",
    ],
  },
  "./store": {
    path: "./store/index.ts",
    values: [
      "ANONYMOUS_USER",
      "BaseStore",
      "InMemoryStore",
      "StoreEmbeddingError",
      "StoreInputError",
      "StoreMissingError",
      "compareNamespaces",
      "userNamespace",
    ],
    types: [
      "BaseStoreOptions",
      "EmbedTexts",
      "EmbeddingModelLike",
      "ListNamespacesOptions",
      "ScanPage",
      "Store",
      "StoreFilter",
      "StoreIndex",
      "StoreItem",
      "StoreRow",
      "StoreRowWrite",
      "StoreSearchItem",
      "StoreSearchOptions",
      "StoreValue",
    ],
  },
  "./host": {
    path: "./host/index.ts",
    values: [
      "continuationRefusal",
      "invokeAsHost",
      "isChildThreadId",
      "isRemoteTool",
      "isRemoteToolCall",
      "isRunLeaseHeld",
      "streamAsHost",
      "uuidv7",
      "withFields",
    ],
    types: ["GraphDefinition", "HostControls", "RemoteToolCall"],
  },
  "./langgraph": {
    path: "./langgraph/index.ts",
    values: ["MessagesAnnotation", "MessagesZodState", "START", "toolsCondition"],
    types: [],
  },
  "./func": {
    path: "./func/index.ts",
    values: ["entrypoint", "task"],
    types: [
      "Entrypoint",
      "EntrypointContext",
      "EntrypointOptions",
      "EntrypointResult",
      "EntrypointState",
      "NamedTaskOptions",
      "Task",
      "TaskContext",
      "TaskInDoubtPolicy",
      "TaskOptions",
    ],
  },
  "./interop": {
    path: "./interop/index.ts",
    values: ["LcMessageError", "fromLcMessage", "toLcMessage"],
    types: ["LcExtras", "LcMessage"],
  },
  "./testing": {
    path: "./testing/index.ts",
    values: [
      "FAULT_POINTS",
      "FaultPoints",
      "SUPPORT_SCRIPT",
      "ScriptedModel",
      "checkpointerConformance",
      "decodeEnvelope",
      "hashEmbedding",
      "ledgerKey",
      "recordingLogger",
      "storeConformance",
      "supportAgent",
      "supportModel",
      "supportTools",
    ],
    types: [
      "CheckpointerHarness",
      "FaultAction",
      "FaultContext",
      "FaultInjector",
      "FaultPointName",
      "LogRecord",
      "RecordingLogger",
      "ResultEnvelope",
      "ScriptedTurn",
      "StoreHarness",
      "SupportAgentOptions",
      "SupportToolsOptions",
      "TestApi",
    ],
  },
} as const;

/** The names an entry's `index.ts` exports, split into values and types, as written. */
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

const sorted = (names: readonly string[]) => [...names].sort();
const namesOf = (entry: keyof typeof ENTRIES) => [
  ...ENTRIES[entry].values,
  ...ENTRIES[entry].types,
];

/** What an agent author sees: small enough to learn, types included (issue 28). */
const MAIN_ENTRY_LIMIT = 80;

describe("@tenxgraph/core entry points", () => {
  it("are exactly the ones package.json exports", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(Object.keys(pkg.exports).sort()).toEqual(
      sorted([...Object.keys(ENTRIES), "./package.json"]),
    );
  });

  it(`'.' stays at most ${MAIN_ENTRY_LIMIT} names, types included`, () => {
    expect(namesOf(".").length).toBeLessThanOrEqual(MAIN_ENTRY_LIMIT);
  });

  it("each name has one entry: no two entries share a name", () => {
    const entries = Object.keys(ENTRIES) as (keyof typeof ENTRIES)[];
    const shared = entries.flatMap((a, i) =>
      entries.slice(i + 1).flatMap((b) => {
        const other = new Set(namesOf(b));
        return namesOf(a)
          .filter((name) => other.has(name))
          .map((name) => `${name} (${a}, ${b})`);
      }),
    );
    expect(shared).toEqual([]);
  });

  for (const [entry, expected] of Object.entries(ENTRIES)) {
    it(`'${entry}' exports exactly the listed names`, async () => {
      const url = new URL(expected.path, import.meta.url);
      const source = readFileSync(url, "utf8");
      // Named exports only: `export *` or a declaration would hide a change from this test.
      expect(source).not.toMatch(/export\s+\*|export\s+(const|let|function|class|interface)\s/);
      const declared = declaredExports(source);
      expect(declared.values).toEqual(sorted(expected.values));
      expect(declared.types).toEqual(sorted(expected.types));
      const loaded: Record<string, unknown> = await import(url.href);
      expect(Object.keys(loaded).sort()).toEqual(sorted(expected.values));
    });
  }
});
