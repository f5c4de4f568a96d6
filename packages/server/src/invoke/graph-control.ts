import type { SetupResult, StopResult } from "@tenxgraph/client";
import { ToolNode, type RemoteToolSpec } from "@tenxgraph/core";
import { isRemoteTool } from "@tenxgraph/core/host";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import type { z } from "zod";
import { ApiError } from "../http/api-error.js";
import type { InvokeContext } from "./invoke-context.js";
import type { setupInputSchema } from "../wire/request-schemas.js";

/**
 * Asks the thread's run to stop (`POST /v1/graph/stop`); `checkpoint` is the thread as the
 * caller read it (`null`: no such thread).
 */
export async function stopThread(
  ctx: InvokeContext,
  threadId: string,
  checkpoint: ThreadCheckpoint | null,
): Promise<StopResult> {
  // A stop request is stored in the checkpointer: a run on any process sharing the store sees
  // it at its next poll (within a second), one in this process at once.
  const running = checkpoint?.status === "running";
  if (checkpoint) await ctx.graph.stop({ threadId });
  const reason = checkpoint === null ? "no-state" : running ? undefined : "not-running";
  return {
    ok: checkpoint !== null,
    running,
    ...(reason ? { reason } : {}),
    success: checkpoint !== null,
    message: running ? "Stop requested" : checkpoint ? "Thread is not running" : "Thread not found",
    thread_id: threadId,
    status: running ? "stop_requested" : checkpoint ? "not_running" : "no_state",
  };
}

/**
 * Attaches remote tools to the graph's ToolNodes (`POST /v1/graph/setup`), for every later run.
 * Every entry is checked before any is attached: a refused request changes nothing.
 */
export function attachRemoteTools(
  ctx: InvokeContext,
  tools: z.infer<typeof setupInputSchema>["tools"],
): SetupResult {
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
        [
          {
            loc: ["body", "tools", String(index), "name"],
            msg: "name taken",
            type: "conflict",
          },
        ],
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
  return {
    status: "success",
    details: message,
    success: true,
    message,
    registered_tools: tools.map((t) => ({ node_name: t.node_name, name: t.name })),
  };
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
