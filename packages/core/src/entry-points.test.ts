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
      "ClaimLostError",
      "Command",
      "CompiledGraph",
      "DEFAULT_NODE_TIMEOUT_SECONDS",
      "DEFAULT_RECURSION_LIMIT",
      "DEFAULT_TOOL_TIMEOUT_SECONDS",
      "END",
      "ERROR_CODES",
      "GraphRecursionError",
      "GraphValidationError",
      "IN_DOUBT_INTERRUPT_KIND",
      "InMemoryCheckpointer",
      "LANGGRAPH_OPTION_HINTS",
      "InvalidRunError",
      "MAX_ID_LENGTH",
      "METER_NAME",
      "Message",
      "ModelError",
      "NodeOutputError",
      "NodeTimeoutError",
      "REMOVE_ALL_MESSAGES",
      "RunAbandonedError",
      "REMOTE_TOOL_CALL_KIND",
      "STREAM_MODES",
      "Send",
      "StaleStateError",
      "StateGraph",
      "StorageError",
      "StorageSchemaError",
      "Subgraph",
      "ThreadOwnerError",
      "TenxgraphError",
      "ToolError",
      "ToolNode",
      "UnknownOptionError",
      "appendMessages",
      "decodeEnvelope",
      "interrupt",
      "isChildThreadId",
      "isRemoteTool",
      "isRemoteToolCall",
      "isTenxgraphError",
      "jsonLogger",
      "ledgerKey",
      "remoteTool",
      "requireKnownOptions",
      "silentLogger",
      "withFields",
      "tool",
      "trimMessages",
      "uuidv7",
    ],
    types: [
      "AnyCompiledGraph",
      "AnyTool",
      "AssistantMessage",
      "BaseState",
      "Checkpointer",
      "CommandOptions",
      "CommittedProgress",
      "CompileOptions",
      "CompletedLedgerEntry",
      "ContentBlock",
      "DebugChunk",
      "DefaultState",
      "Edge",
      "EdgeTarget",
      "EmitEvent",
      "ErrorCode",
      "Goto",
      "GraphDefinition",
      "GraphNode",
      "IdGenerator",
      "InDoubtDecision",
      "InDoubtPolicy",
      "InMemoryCheckpointerOptions",
      "Interrupt",
      "InterruptedLedgerEntry",
      "KnownNode",
      "LedgerEntry",
      "LedgerStatus",
      "Logger",
      "MessageRemoval",
      "MessageUpdate",
      "MessagesChunk",
      "NodeContext",
      "NodeEvent",
      "NodeFunction",
      "NodeLike",
      "NodeOptions",
      "NodeOutput",
      "OptionHints",
      "PathMap",
      "Reducer",
      "Reducers",
      "RemoteToolCall",
      "RemoteToolSpec",
      "ResultEnvelope",
      "ResumeInput",
      "Role",
      "Router",
      "RouterChoice",
      "RunConfig",
      "RunEvent",
      "RunInput",
      "RunMode",
      "RunResult",
      "RunStatus",
      "StartedLedgerEntry",
      "StateGraphConstructor",
      "StateHistoryEntry",
      "StateOf",
      "StateOptions",
      "StateSchema",
      "StateUpdate",
      "StreamChunks",
      "StreamConfig",
      "StreamEvent",
      "StreamMode",
      "StreamModeOption",
      "StreamOutput",
      "SubgraphOptions",
      "SubgraphSource",
      "SystemMessage",
      "ThreadState",
      "ThreadStatus",
      "ThreadSummary",
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
      "ThreadOwnerError",
      "childRanges",
      "isPrefix",
      "isTenxgraphError",
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
      "CheckpointWrite",
      "Checkpointer",
      "ClaimResult",
      "CompletedLedgerEntry",
      "Frontier",
      "FrontierTask",
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
      "ThreadFilter",
      "ThreadStatus",
      "ThreadSummary",
      "VersionPage",
      "VersionRange",
    ],
  },
  "./testing": {
    path: "./testing/index.ts",
    values: [
      "FAULT_POINTS",
      "FaultPoints",
      "SUPPORT_SCRIPT",
      "ScriptedModel",
      "checkpointerConformance",
      "recordingLogger",
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
      "ScriptedTurn",
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

describe("@tenxgraph/core entry points", () => {
  it("are exactly the ones package.json exports", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(Object.keys(pkg.exports).sort()).toEqual(
      sorted([...Object.keys(ENTRIES), "./package.json"]),
    );
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
