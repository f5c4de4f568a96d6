/* global module */
/**
 * The import rules of the packages' sources, checked by `npm run lint:deps` (part of `npm run lint`).
 *
 * Core's folders form layers; a folder imports only from the layers below it:
 *
 *   errors, messages                      plain values and their errors
 *   storage                               the checkpointer contract and its row types
 *   events                                logger, metrics, stream events
 *   runtime  <->  graph                   the run loop and the graph it runs (one layer)
 *   ledger                                the ledger protocol: claim, run, record, replay, in doubt
 *   tools                                 tools and ToolNode, which run their calls through the ledger
 *   testing                               @tenxgraph/core/testing
 *   host                                  @tenxgraph/core/host: a host's run controls
 *
 * The ledger and the tools use only the node's part of runtime/ (its context, deadlines,
 * interrupt(), held claims, fault points), never the run loop. Tests and test support may import
 * across layers; production files may not. On top of that, no file may take part in an import
 * cycle, type-only imports included: a cycle is a layer waiting to be cut.
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
      ["messages", "storage", "events", "runtime", "graph", "ledger", "tools", "testing"],
    ),
    layer(
      "messages-import-only-errors",
      "messages/ are plain values: they know nothing of how they are stored or run.",
      "messages",
      ["storage", "events", "runtime", "graph", "ledger", "tools", "testing"],
    ),
    layer(
      "storage-is-below-the-runtime",
      "storage/ is the contract the engines implement: it must not reach up into the runtime, " +
        "the ledger protocol or the tools (its row types live in storage/).",
      "storage",
      ["events", "runtime", "graph", "ledger", "tools", "testing"],
    ),
    layer(
      "events-are-below-the-runtime",
      "events/ (logger, metrics, stream events) are used by every layer above storage.",
      "events",
      ["runtime", "graph", "ledger", "tools", "testing"],
    ),
    {
      ...layer(
        "runtime-does-not-know-the-ledger",
        "The run loop runs nodes; the ledger protocol is what ToolNode does inside one.",
        "runtime|graph",
        ["ledger", "tools", "testing"],
      ),
      // Known debt, the one exception: a run's remote tools (RunConfig.remoteTools) are made
      // into tools by the run config and carried in the node runtime. They belong in tools/
      // (the runtime would carry the specs); until then these two edges, and only these.
      to: {
        path: `${CORE}(ledger|tools|testing)/`,
        pathNot: `${CORE}tools/(tool|remote-tool)\\.ts$`,
      },
    },
    {
      name: "runtime-knows-only-remote-tools",
      comment: "Only the run config and the node runtime may know tools, and only remote tools.",
      severity: "error",
      from: {
        path: `${CORE}(runtime|graph)/`,
        pathNot: [TESTS, `${CORE}runtime/(run-config|node-context)\\.ts$`],
      },
      to: { path: `${CORE}tools/(tool|remote-tool)\\.ts$` },
    },
    layer(
      "ledger-does-not-know-tools",
      "The ledger protocol takes the tool run as a callback: it never imports tools/.",
      "ledger",
      ["tools", "testing"],
    ),
    {
      name: "nodes-use-the-node-runtime-only",
      comment:
        "The ledger and the tools run inside a node: from runtime/ they use what a node gets " +
        "(its context, deadlines, interrupt(), held claims, fault points, the in-doubt " +
        "question), never the run loop itself.",
      severity: "error",
      from: { path: `${CORE}(ledger|tools)/`, pathNot: TESTS },
      to: {
        path: `${CORE}runtime/`,
        pathNot: `${CORE}runtime/(node-context|deadline|interrupt|run-watch|fault-points|in-doubt-decision)\\.ts$`,
      },
    },
    {
      name: "nothing-imports-the-host-entry",
      comment:
        "host/ is @tenxgraph/core/host, the top: the engine reads a host's controls through " +
        "runtime/host-controls.ts and never imports the entry (its tests may).",
      severity: "error",
      from: { path: CORE, pathNot: [TESTS, `${CORE}host/`] },
      to: { path: `${CORE}host/` },
    },
    layer(
      "tools-are-not-test-code",
      "Production code never imports @tenxgraph/core/testing.",
      "tools",
      ["testing"],
    ),
    {
      name: "core-imports-no-storage-engine",
      comment:
        "The core imports no storage engine, nor any package built on it: engines depend on " +
        "@tenxgraph/core, never the other way round.",
      severity: "error",
      from: { path: "^packages/core/" },
      to: {
        path: "^packages/(sqlite|postgres|server|models|client)/|node_modules/(better-sqlite3|pg|pg-[^/]+|ioredis|redis)/",
      },
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
