import type { BaseState, CompiledGraph, RunConfig, RunInput } from "@tenxgraph/core";

/** How a streamed run ended: its status, or the error it rejected with. */
export interface RunEnd {
  status: string | null;
  error: unknown;
}

/** A run consumed in the background, with what it announced as it went. */
export interface StreamedRun {
  /** Versions of the durable writes the run committed (its `state` events), so far. */
  readonly versions: number[];
  /** Ledger keys of the calls it answered from the ledger, so far. */
  readonly replayed: string[];
  readonly ended: Promise<RunEnd>;
}

/**
 * Streams a run in the background: a test can act in the middle of it (stop a server) and then
 * compare what the run said it committed with what the database holds.
 */
export function streamRun<S extends BaseState>(
  app: CompiledGraph<S>,
  input: RunInput<S>,
  config: RunConfig,
): StreamedRun {
  const versions: number[] = [];
  const replayed: string[] = [];
  const consume = async (): Promise<RunEnd> => {
    let status: string | null = null;
    try {
      for await (const event of app.stream(input, config)) {
        if (event.type === "state") versions.push(event.version);
        if (event.type === "tool_result" && event.replayed) replayed.push(event.key!);
        if (event.type === "run_end") status = event.status;
      }
      return { status, error: null };
    } catch (error) {
      return { status: null, error };
    }
  };
  return { versions, replayed, ended: consume() };
}
