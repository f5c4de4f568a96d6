import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { silentLogger, type BaseState, type CompileOptions, type Logger } from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { supportAgent, supportModel, supportTools } from "@tenxgraph/core/testing";
import { appendEffect } from "../../support/effect-log.js";

/** What the served support agent does; plain JSON, so a server process gets it in its params. */
export interface TestGraphParams {
  /** One JSON line per charge or email that really happened: `{ line, pid }`. */
  effectLog: string;
  /** How long send_receipt takes (default 0): a server can be killed while it runs. */
  mailerDelayMs?: number;
  /** When set, the model waits until this file exists before it answers. */
  gateFile?: string;
}

/** One effect in the log. */
export interface Effect {
  line: string;
  pid: number;
}

/**
 * The support agent the server tests serve: the model asks for the seed's three tools for the
 * order the last user message names (charge_card with a domain key), then answers. Claims go
 * stale after 1 s so a killed server's calls are found in doubt quickly. The graph logs nothing
 * unless given a `logger` (a worker process passes one, so its in-doubt warnings reach stderr).
 */
export function buildTestGraph(
  params: TestGraphParams,
  checkpointer: Checkpointer,
  logger: Logger = silentLogger,
  /** Where its spans go (default: the global tracer, a no-op without an SDK). */
  tracing?: CompileOptions["tracing"],
) {
  const outside = (line: string) => appendEffect(params.effectLog, { line, pid: process.pid });
  const tools = supportTools({ outside, mailerDelayMs: params.mailerDelayMs ?? 0 });
  async function model(state: BaseState, ctx: { signal: AbortSignal }) {
    while (params.gateFile && !existsSync(params.gateFile))
      await sleep(20, undefined, { signal: ctx.signal });
    return supportModel(state);
  }
  return supportAgent({
    model,
    tools,
    checkpointer,
    stopPollIntervalMs: 250,
    claimStaleAfterMs: 1000,
    logger,
    ...(tracing ? { tracing } : {}),
  });
}
