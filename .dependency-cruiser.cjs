/* global module */
/**
 * The import rules of the packages' sources, checked by `npm run lint:deps` (part of `npm run lint`).
 *
 * Core's folders form layers; a folder imports only from the layers below it:
 *
 *   errors, messages   plain values and their errors
 *   storage            the checkpointer contract and its row types
 *   store              the long-term store (ctx.store): its contract, BaseStore, in memory
 *   events             logger, metrics, stream events
 *   node               what a node gets: its context and the runtime behind it, deadlines,
 *                      interrupt(), the claim watch, the step ledger, fault points, the in-doubt
 *                      question, the run's remote-tool specs
 *   definition         what a graph is: state, reducers, edges, Send, Command, node types,
 *                      schema, branch merge, validation
 *   runtime            the run loop that runs a definition: start, steps, routes, writes, streams
 *   graph              the builder (StateGraph), the compiled graph (the façade), subgraphs
 *   ledger             the ledger protocol: claim, run, record, replay, in doubt
 *   tools              tools and ToolNode, which run their calls through the ledger
 *   testing            @tenxgraph/core/testing
 *   langgraph          @tenxgraph/core/langgraph: LangGraph.js's spellings (START, toolsCondition,
 *                      MessagesZodState), over definition/; nothing imports it
 *   func               @tenxgraph/core/func: entrypoint and task, a one-node graph whose task
 *                      calls go through the ledger (over graph/ and ledger/); nothing imports it
 *   host               @tenxgraph/core/host: a host's run controls (the top)
 *
 * The ledger and the tools run inside a node: they use node/ and definition/, never runtime/
 * or graph/ (the loop and the builder). Tests and test support may import across layers;
 * production files may not. On top of that, no file may take part in an import cycle,
 * type-only imports included: a cycle is a layer waiting to be cut.
 */
const CORE = "^packages/core/src/";
const TESTS = "\\.test\\.ts$|test-support\\.ts$";

/** A rule: production files in core folder `from` import nothing from the folders `to`. */
function layer(name, comment, from, to) {
  return {
    name,
    comment,
    severity: "error",
    from: { path: `${CORE}(${from})/`, pathNot: TESTS },
    to: { path: `${CORE}(${to.join("|")})/` },
  };
}

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import cycle (type-only imports count): move the shared part into its own file.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    layer(
      "errors-import-nothing",
      "errors/ is the bottom layer: every folder may throw, so it imports no other folder.",
      "errors",
      [
        "messages",
        "storage",
        "store",
        "events",
        "node",
        "definition",
        "runtime",
        "graph",
        "ledger",
        "tools",
        "testing",
      ],
    ),
    layer(
      "messages-import-only-errors",
      "messages/ are plain values: they know nothing of how they are stored or run.",
      "messages",
      [
        "storage",
        "store",
        "events",
        "node",
        "definition",
        "runtime",
        "graph",
        "ledger",
        "tools",
        "testing",
      ],
    ),
    layer(
      "storage-is-below-the-runtime",
      "storage/ is the contract the engines implement: it must not reach up into the runtime, " +
        "the ledger protocol or the tools (its row types live in storage/).",
      "storage",
      ["store", "events", "node", "definition", "runtime", "graph", "ledger", "tools", "testing"],
    ),
    layer(
      "the-long-term-store-is-below-the-runtime",
      "store/ is the long-term store's contract and semantics: nodes get it, so it knows no " +
        "node, graph, run loop, ledger or tool.",
      "store",
      ["events", "node", "definition", "runtime", "graph", "ledger", "tools", "testing"],
    ),
    layer(
      "events-are-below-the-runtime",
      "events/ (logger, metrics, stream events) are used by every layer above storage.",
      "events",
      ["node", "definition", "runtime", "graph", "ledger", "tools", "testing"],
    ),
    layer(
      "what-a-node-gets-is-below-the-graph",
      "node/ is what a node is handed (its context, deadline, interrupt(), watch, fault points): " +
        "a node type refers to it, so it knows no graph, no run loop, no ledger and no tool.",
      "node",
      ["definition", "runtime", "graph", "ledger", "tools", "testing"],
    ),
    layer(
      "the-definition-is-below-the-runtime",
      "definition/ is what a graph is, the data the run loop reads: it never runs anything.",
      "definition",
      ["runtime", "graph", "ledger", "tools", "testing"],
    ),
    layer(
      "the-runtime-is-below-the-builder",
      "The run loop runs a definition: it never imports the builder or the façade (graph/), " +
        "nor the ledger protocol or the tools, which are what ToolNode does inside a node.",
      "runtime",
      ["graph", "ledger", "tools", "testing"],
    ),
    {
      name: "nothing-imports-the-host-entry",
      comment:
        "host/ is @tenxgraph/core/host, the top: it hands a host's controls to the run as a " +
        "parameter (graph/compiled-graph.ts's runAsHost); the engine never imports the entry " +
        "(its tests may).",
      severity: "error",
      from: { path: CORE, pathNot: [TESTS, `${CORE}host/`] },
      to: { path: `${CORE}host/` },
    },
    {
      name: "nothing-imports-the-langgraph-entry",
      comment:
        "langgraph/ is @tenxgraph/core/langgraph, LangGraph.js's spellings for ported code: " +
        "the engine has its own names and never imports it (its tests may).",
      severity: "error",
      from: { path: CORE, pathNot: [TESTS, `${CORE}langgraph/`] },
      to: { path: `${CORE}langgraph/` },
    },
    {
      name: "nothing-imports-the-func-entry",
      comment:
        "func/ is @tenxgraph/core/func, the functional API built on the builder and the ledger: " +
        "the engine never imports it (its tests may).",
      severity: "error",
      from: { path: CORE, pathNot: [TESTS, `${CORE}func/`] },
      to: { path: `${CORE}func/` },
    },
    layer(
      "the-builder-knows-no-tools",
      "graph/ builds and runs graphs of any nodes: it never imports the ledger or the tools.",
      "graph",
      ["ledger", "tools", "testing"],
    ),
    layer(
      "the-ledger-uses-what-a-node-gets",
      "The ledger protocol runs inside a node: from the engine it uses node/ only, never the " +
        "run loop or the builder; it takes the tool run as a callback and never imports tools/.",
      "ledger",
      ["runtime", "graph", "tools", "testing"],
    ),
    layer(
      "tools-use-what-a-node-gets",
      "Tools and ToolNode run inside a node: they use node/ and definition/, never the run loop " +
        "or the builder; production code never imports @tenxgraph/core/testing.",
      "tools",
      ["runtime", "graph", "testing"],
    ),
    {
      name: "no-server-folder-cycle",
      comment:
        "The server's folders (http, wire, storage, threads, invoke, chat, background, langgraph, app, " +
        "project, cli) form layers: no two import each other, even through others. A job that needs " +
        "something from the app names it as an interface in its own folder (threads-context.ts, …).",
      severity: "error",
      scope: "folder",
      from: { path: "^packages/server/src/" },
      to: { path: "^packages/server/src/", circular: true },
    },
    {
      name: "core-imports-no-storage-engine",
      comment:
        "The core imports no storage engine, nor any package built on it: engines depend on " +
        "@tenxgraph/core, never the other way round.",
      severity: "error",
      from: { path: "^packages/core/" },
      to: {
        path: "^packages/(sqlite|postgres|server|models|client|langchain)/|node_modules/(better-sqlite3|pg|pg-[^/]+|ioredis|redis)/",
      },
    },
    {
      name: "only-the-langchain-package-imports-langchain",
      comment:
        "LangChain is a peer of @tenxgraph/langchain alone: the core and the server speak LangChain's " +
        "messages as JSON (@tenxgraph/core/interop) and import no LangChain package.",
      severity: "error",
      from: { path: "^packages/", pathNot: "^packages/langchain/" },
      to: { path: "node_modules/@langchain/core/" },
    },
    {
      name: "langchain-package-imports-core-by-its-name",
      comment: "@tenxgraph/langchain uses the packages' public entries, never a path inside them.",
      severity: "error",
      from: { path: "^packages/langchain/src/" },
      to: { path: "^packages/(core|models|sqlite|server)/src/" },
    },
    {
      name: "engines-import-core-by-its-name",
      comment: "Storage packages import `@tenxgraph/core`, never a path inside it.",
      severity: "error",
      from: { path: "^packages/(sqlite|postgres)/src/" },
      to: { path: "^packages/core/src/" },
    },
    {
      name: "inspector-speaks-only-the-public-api",
      comment:
        "The web inspector is a client of the API like any other: it reaches the server only " +
        "through @tenxgraph/client, never the server's or the runtime's code.",
      severity: "error",
      from: { path: "^packages/server/inspector/" },
      to: { path: "^packages/(core|sqlite|postgres|models|server/src)/" },
    },
  ],
  options: {
    // Another package's build output is a dependency to check, never a source to cruise.
    doNotFollow: { path: ["node_modules", "/dist/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
