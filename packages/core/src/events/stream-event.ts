import type { Message, ToolMessage } from "../messages/message.js";
import type { Interrupt, ThreadStatus } from "../storage/checkpointer.js";

/** How a run ended without an error. */
export type RunStatus = "completed" | "interrupted" | "stopped";

/**
 * Where a node event comes from when a subgraph sent it: the subgraph node's namespace in the
 * parent (`WORKER`, `WORKER:1` for a `Send`), nested ones joined by `|` (`WORKER|RESEARCH`).
 * Absent for the graph's own nodes; `node` and `step` are then the child's.
 */
// A type, not an interface: events are read as `Record<string, unknown>`, which only a type
// alias satisfies.
type FromSubgraph = { namespace?: string };

/** What `stream()` yields, discriminated on `type`. `invoke()` runs the same loop silently. */
export type StreamEvent =
  | { type: "run_start"; threadId: string; runId: string; mode: RunMode }
  | NodeEvent
  | {
      type: "state";
      version: number;
      step: number;
      currentNode: string | null;
      status: ThreadStatus;
    }
  | { type: "interrupt"; interrupts: Interrupt[] }
  | { type: "run_end"; status: RunStatus; version: number }
  | { type: "error"; code: string | null; message: string };

/** The events of a node at work: a subgraph's reach its parent's stream, with their namespace. */
export type NodeEvent = FromSubgraph &
  (
    | { type: "node_start"; node: string; step: number }
    | { type: "message"; node: string; message: Message }
    | { type: "message_delta"; node: string; messageId: string; delta: string }
    | { type: "tool_start"; node: string; key: string | null; toolCallId: string; toolName: string }
    | {
        type: "tool_result";
        node: string;
        key: string | null;
        toolCallId: string;
        toolName: string;
        replayed: boolean;
        isError: boolean;
        message: ToolMessage;
      }
    | {
        /**
         * The call was found started but never recorded (its run crashed, or its worker was
         * lost): it may or may not have taken effect. `policy` is the tool's `onInDoubt`, which
         * decides what happens next (`retry` runs it again as `attempt + 1`).
         */
        type: "tool_in_doubt";
        node: string;
        key: string;
        toolCallId: string;
        toolName: string;
        attempt: number;
        policy: "retry" | "fail" | "interrupt" | "reconcile";
      }
  );

/** The types of {@link NodeEvent}. */
export const NODE_EVENT_TYPES: ReadonlySet<string> = new Set<NodeEvent["type"]>([
  "node_start",
  "message",
  "message_delta",
  "tool_start",
  "tool_result",
  "tool_in_doubt",
]);

/** `new` starts a turn from input; `resume` answers an interrupt; `continue` picks up after a crash, stop or failure. */
export type RunMode = "new" | "resume" | "continue";

/** Hands an event to `stream()` consumers; a no-op under `invoke()`. */
export type EmitEvent = (event: StreamEvent) => void;
