import type { Interrupt, StreamChunk, WireMessage } from "@tenxgraph/client";

/** One line of a run's activity, in the order it happened. */
export type RunActivity =
  | { kind: "node"; node: string; step: number }
  | { kind: "tool_started"; node: string; toolName: string; toolCallId: string; key: string }
  | {
      kind: "tool_completed";
      toolName: string;
      toolCallId: string;
      key: string;
      replayed: boolean;
      isError: boolean;
    }
  | { kind: "tool_in_doubt"; toolName: string; key: string; attempt: number; policy: string }
  | { kind: "state"; version: number; node: string; status: string };

/** Where a streamed run is. */
export type LiveStatus = "running" | "completed" | "interrupted" | "stopped" | "failed";

/** What the page shows of a run while it streams: built chunk by chunk by {@link applyChunk}. */
export interface LiveRun {
  threadId: string | null;
  runId: string | null;
  status: LiveStatus;
  /** Whole messages, in the order they came (the input echo first). */
  messages: WireMessage[];
  /** Text of messages still being written by the model, by message id. */
  drafts: Record<string, string>;
  activity: RunActivity[];
  /** The key of every tool call the stream reported done, and whether it was replayed. */
  replayed: Record<string, boolean>;
  interrupts: Interrupt[];
  version: number | null;
  error: { code: string; reason: string } | null;
}

/** A run that has not sent anything yet. */
export function startedRun(threadId: string | null): LiveRun {
  return {
    threadId,
    runId: null,
    status: "running",
    messages: [],
    drafts: {},
    activity: [],
    replayed: {},
    interrupts: [],
    version: null,
    error: null,
  };
}

/** `run` after `chunk`; `run` itself is left as it was. */
export function applyChunk(run: LiveRun, chunk: StreamChunk): LiveRun {
  const next: LiveRun = {
    ...run,
    threadId: chunk.thread_id ?? chunk.metadata.thread_id ?? run.threadId,
    runId: chunk.run_id ?? run.runId,
  };
  switch (chunk.event) {
    case "message":
      return chunk.message ? withMessage(next, chunk.message) : next;
    case "updates":
      return withUpdate(next, chunk.data ?? {});
    case "state":
      return withActivity(next, {
        kind: "state",
        version: Number(chunk.data?.version),
        node: String(chunk.data?.current_node ?? ""),
        status: String(chunk.data?.status ?? ""),
      });
    case "error":
      return {
        ...next,
        status: "failed",
        error: {
          code: String(chunk.data?.code ?? "ERROR"),
          reason: String(chunk.data?.reason ?? "The run failed"),
        },
      };
  }
}

function withMessage(run: LiveRun, message: WireMessage): LiveRun {
  const id = message.message_id;
  if (message.delta) {
    const text = message.content
      .map((b) => (b.type === "text" ? String(b.text ?? "") : ""))
      .join("");
    return { ...run, drafts: { ...run.drafts, [id]: (run.drafts[id] ?? "") + text } };
  }
  // The whole message replaces its draft.
  const { [id]: _written, ...drafts } = run.drafts;
  return { ...run, drafts, messages: [...run.messages, message] };
}

function withUpdate(run: LiveRun, data: Record<string, unknown>): LiveRun {
  const text = (field: string) => String(data[field] ?? "");
  switch (data.status) {
    case "node_invoked":
      return withActivity(run, { kind: "node", node: text("node"), step: Number(data.step) });
    case "tool_started":
      return withActivity(run, {
        kind: "tool_started",
        node: text("node"),
        toolName: text("tool_name"),
        toolCallId: text("tool_call_id"),
        key: text("key"),
      });
    case "tool_completed": {
      const replayed = data.replayed === true;
      const done = withActivity(run, {
        kind: "tool_completed",
        toolName: text("tool_name"),
        toolCallId: text("tool_call_id"),
        key: text("key"),
        replayed,
        isError: data.is_error === true,
      });
      return { ...done, replayed: { ...done.replayed, [text("key")]: replayed } };
    }
    case "tool_in_doubt":
      return withActivity(run, {
        kind: "tool_in_doubt",
        toolName: text("tool_name"),
        key: text("key"),
        attempt: Number(data.attempt),
        policy: text("policy"),
      });
    case "interrupted":
      return {
        ...run,
        status: "interrupted",
        // The run's end repeats "interrupted" without the list: keep the one that came first.
        interrupts: Array.isArray(data.interrupts)
          ? (data.interrupts as Interrupt[])
          : run.interrupts,
        version: versionOf(data, run),
      };
    case "stopped":
      return { ...run, status: "stopped", version: versionOf(data, run) };
    case "graph_invoked":
      return { ...run, status: "completed", version: versionOf(data, run) };
    default:
      return run;
  }
}

function versionOf(data: Record<string, unknown>, run: LiveRun): number | null {
  return typeof data.version === "number" ? data.version : run.version;
}

function withActivity(run: LiveRun, activity: RunActivity): LiveRun {
  return { ...run, activity: [...run.activity, activity] };
}
