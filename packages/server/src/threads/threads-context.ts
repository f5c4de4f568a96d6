import type { BaseState, CompiledGraph, Logger } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import type { ShutdownContext } from "../http/shutdown.js";
import type { StateEditPolicy } from "./state-edit-policy.js";

/** Names a new thread from the texts of its first messages. */
export type ThreadNameGenerator = (texts: string[]) => string | Promise<string>;

/** Background runs as a thread's deletion sees them: their records go with the thread. */
export interface ThreadRunRecords {
  store: { deleteThreadRuns(threadId: string): Promise<unknown> };
}

/** What the thread routes work with: the graph, its store, and the server's thread policies. */
export interface ThreadsContext extends ShutdownContext {
  graph: CompiledGraph<BaseState>;
  /** `graph`'s id in the project (`agent` unless named), in its runs' spans (`invoke_agent <id>`). */
  graphId: string;
  checkpointer: Checkpointer;
  logger: Logger;
  threadNames: ThreadNameGenerator | null;
  /** Who may add tool calls or results, or set `as_node`, through a state edit. */
  stateEdits: StateEditPolicy;
  /** Background runs, whose records a thread's deletion removes; `null` when not configured. */
  runs: ThreadRunRecords | null;
}
