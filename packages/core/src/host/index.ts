/**
 * For hosts that run graphs on others' behalf (the HTTP server, background-run workers): the
 * controls they steer a run with, which are no `RunConfig` options, and the few engine helpers
 * they share. Agent authors use `@tenxgraph/core`; store authors `@tenxgraph/core/storage`.
 * @module
 */
export { continuationRefusal, invokeAsHost, streamAsHost } from "./host-run.js";
export type { HostControls } from "../runtime/host-controls.js";
export type { GraphDefinition } from "../definition/graph-definition.js";
export { isRemoteTool, isRemoteToolCall } from "../tools/remote-tool.js";
export type { RemoteToolCall } from "../tools/remote-tool.js";
export { uuidv7 } from "../messages/ids.js";
export { withFields } from "../events/logger.js";
export { isChildThreadId } from "../graph/subgraph.js";
export { isRunLeaseHeld } from "../runtime/run-lease.js";
