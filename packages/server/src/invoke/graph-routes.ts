import { ToolNode, isRemoteTool, type RemoteToolSpec } from "@tenxgraph/core";
import type { Hono } from "hono";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { graphInfo, graphTools, stateSchema } from "../wire/graph-info.js";
import { authorizeThread } from "../threads/ownership.js";
import { pathId, readBody } from "../http/request-input.js";
import { setupInputSchema, stopInputSchema } from "../wire/request-schemas.js";
import type { ServerContext } from "../http/server-context.js";
import type { ServerEnv } from "../http/server-env.js";

/** Health, graph description, stop and setup. */
export function graphRoutes(app: Hono<ServerEnv>, ctx: ServerContext): void {
  app.get("/ping", (c) => ok(c, "pong"));
  app.get("/v1/graph", (c) => ok(c, graphInfo(ctx.graph, true)));
  app.get("/v1/graph/tools", (c) => ok(c, graphTools(ctx.graph)));
  app.get("/v1/graph:StateSchema", (c) => ok(c, stateSchema(ctx.graph)));

  app.post("/v1/graph/stop", async (c) => {
    const { thread_id: threadId } = await readBody(c, stopInputSchema);
    const checkpoint = await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "stop");
    // A stop request is stored in the checkpointer: a run on any process sharing the store sees
    // it at its next poll (within a second), one in this process at once.
    const running = checkpoint?.status === "running";
    if (checkpoint) await ctx.graph.stop({ threadId });
    const reason = checkpoint === null ? "no-state" : running ? undefined : "not-running";
    return ok(c, {
      ok: checkpoint !== null,
      running,
      ...(reason ? { reason } : {}),
      success: checkpoint !== null,
      message: running
        ? "Stop requested"
        : checkpoint
          ? "Thread is not running"
          : "Thread not found",
      thread_id: threadId,
      status: running ? "stop_requested" : checkpoint ? "not_running" : "no_state",
    });
  });

  app.post("/v1/graph/fix", async (c) => {
    const { thread_id: threadId } = await readBody(c, stopInputSchema);
    const checkpoint = await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "fix");
    // Nothing to remove: transcripts are append-only, and unanswered tool calls are finished by
    // continuing the run (`"continue": true`), their completed calls replayed from the ledger.
    return ok(c, {
      success: false,
      message: checkpoint
        ? 'Nothing removed: tenxgraph transcripts are append-only; continue the run with {"continue": true} to finish unanswered tool calls'
        : "Thread not found",
      removed_count: 0,
      state: null,
    });
  });

  app.get("/v1/observability/:thread_id", async (c) => {
    const threadId = pathId(c, "thread_id");
    await authorizeThread(ctx.checkpointer, c.get("user"), threadId, "read");
    // Run traces are not kept by the server (use the OpenTelemetry metrics and logs).
    return ok(c, { thread_id: threadId, run_count: 0, run_ids: [], run: null });
  });

  app.post("/v1/graph/setup", async (c) => {
    if (!ctx.remoteToolSetup) {
      throw new ApiError(
        403,
        "PERMISSION_DENIED",
        "Remote tool setup is disabled when auth is configured or MODE=production: " +
          "send the tools with each run in config.remote_tools instead",
      );
    }
    const { tools } = await readBody(c, setupInputSchema);
    const byNode = new Map<string, RemoteToolSpec[]>();
    for (const [index, t] of tools.entries()) {
      const node = ctx.graph.definition.nodes.get(t.node_name);
      if (!(node instanceof ToolNode)) throw notAToolNode(t.node_name, index, node !== undefined);
      const own = node.tools.find((x) => x.name === t.name && !isRemoteTool(x));
      if (own) {
        throw new ApiError(
          409,
          "REMOTE_TOOL_NAME_TAKEN",
          `Node '${t.node_name}' already has its own tool '${t.name}'`,
          [{ loc: ["body", "tools", String(index), "name"], msg: "name taken", type: "conflict" }],
        );
      }
      const specs = byNode.get(t.node_name) ?? [];
      byNode.set(t.node_name, [...specs, t]);
    }
    // Every entry checked before any is attached: a refused request changes nothing.
    for (const [name, specs] of byNode)
      (ctx.graph.definition.nodes.get(name) as ToolNode).attachRemoteTools(specs);
    const nodes = [...byNode.keys()];
    const message = `Added tools to nodes: [${nodes.map((n) => `'${n}'`).join(", ")}]`;
    return ok(c, {
      status: "success",
      details: message,
      success: true,
      message,
      registered_tools: tools.map((t) => ({ node_name: t.node_name, name: t.name })),
    });
  });
}

function notAToolNode(name: string, index: number, exists: boolean): ApiError {
  const loc = ["body", "tools", String(index), "node_name"];
  return exists
    ? new ApiError(
        422,
        "NOT_A_TOOL_NODE",
        `Node '${name}' is not a ToolNode: it cannot run tools`,
        [{ loc, msg: "not a ToolNode", type: "value_error" }],
      )
    : new ApiError(404, "NODE_NOT_FOUND", `The graph has no node '${name}'`, [
        { loc, msg: "unknown node", type: "value_error" },
      ]);
}
