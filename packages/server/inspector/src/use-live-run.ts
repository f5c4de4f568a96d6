import type { InvokeInput } from "@tenxgraph/client";
import { useRef, useState } from "preact/hooks";
import { explain, needsToken } from "./connection.js";
import { useInspector } from "./inspector-context.js";
import { applyChunk, startedRun, type LiveRun } from "./live-run.js";

/** The run the page streams on a thread, and how to start and stop it. */
export interface LiveRunControl {
  /** The last run streamed from this page (still running or ended), or null. */
  live: LiveRun | null;
  running: boolean;
  /** A request that failed before the run began (a 409, a 422), as a sentence. */
  refused: string | null;
  /**
   * Streams a run with `input` on the thread: new messages, an interrupt's answer, a continue;
   * with `fromVersion`, a fork of that past version.
   */
  start(input: InvokeInput, options?: { fromVersion?: number }): Promise<void>;
  /** Asks the server to stop the thread's run (works for a run started anywhere). */
  stop(): Promise<void>;
}

/**
 * Streams runs on `threadId` with every event (`full` granularity: node steps and tool calls
 * too), building the live view chunk by chunk. `onEnd` runs when a run ends, however it ends.
 */
export function useLiveRun(threadId: string, onEnd: () => void): LiveRunControl {
  const { client, askForToken } = useInspector();
  const [live, setLive] = useState<LiveRun | null>(null);
  const [running, setRunning] = useState(false);
  const [refused, setRefused] = useState<string | null>(null);
  const current = useRef<LiveRun | null>(null);
  const show = (run: LiveRun) => {
    current.current = run;
    setLive(run);
  };

  async function start(input: InvokeInput, options: { fromVersion?: number } = {}) {
    setRefused(null);
    setRunning(true);
    show(startedRun(threadId));
    try {
      const stream = client.stream(input, { ...options, threadId, granularity: "full" });
      for await (const chunk of stream) show(applyChunk(current.current!, chunk));
    } catch (error) {
      if (needsToken(error)) askForToken(explain(error));
      setRefused(explain(error));
      show({ ...current.current!, status: "failed" });
    } finally {
      setRunning(false);
      onEnd();
    }
  }

  async function stop() {
    try {
      await client.stop(threadId);
    } catch (error) {
      setRefused(explain(error));
    }
  }

  return { live, running, refused, start, stop };
}
