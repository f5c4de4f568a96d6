import { z } from "zod";
import {
  Command,
  type BaseState,
  type CompiledGraph,
  type Message,
  type RunConfig,
  type RunInput,
} from "@tenxgraph/core";
import type { HostControls } from "@tenxgraph/core/host";
import { isRunLeaseHeld, uuidv7 } from "@tenxgraph/core/host";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";
import { requireValidId } from "../http/request-limits.js";
import { grantThread } from "../threads/ownership.js";
import { refusePrivilegedEdit } from "../threads/state-edit-policy.js";
import { refuseChildThreadId, refuseSubgraphThread } from "../threads/subgraph-threads.js";
import { resolveAssistant, type LgAssistant } from "./lg-assistants.js";
import type { LgContext } from "./lg-context.js";
import { unsupported } from "./lg-http.js";
import { ourUpdate } from "./lg-input.js";
import { versionOf } from "./lg-state.js";
import { versionBeforeRun } from "./lg-rollback.js";
import { createLgThread } from "./lg-threads.js";
import { LG_STREAM_MODES, type LgStreamMode } from "./lg-stream.js";

const checkpointRef = z
  .looseObject({
    checkpoint_id: z.string().nullish(),
    configurable: z.looseObject({ checkpoint_id: z.string().nullish() }).nullish(),
  })
  .nullish();

/** The body of `runs.stream`, `runs.wait` and `runs.create` (LangGraph's `RunCreate`). */
export const runCreateSchema = z.looseObject({
  assistant_id: z.string().min(1),
  input: z.union([z.record(z.string(), z.unknown()), z.null()]).optional(),
  command: z
    .looseObject({
      resume: z.unknown().optional(),
      update: z.record(z.string(), z.unknown()).nullish(),
      goto: z.union([z.string(), z.array(z.string())]).nullish(),
    })
    .nullish(),
  config: z
    .looseObject({
      recursion_limit: z.number().int().positive().nullish(),
      configurable: z.record(z.string(), z.unknown()).nullish(),
    })
    .nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  stream_mode: z.union([z.string(), z.array(z.string())]).nullish(),
  stream_subgraphs: z.boolean().nullish(),
  stream_resumable: z.boolean().nullish(),
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).nullish(),
  if_not_exists: z.enum(["create", "reject"]).nullish(),
  on_disconnect: z.enum(["cancel", "continue"]).nullish(),
  on_completion: z.enum(["delete", "keep"]).nullish(),
  interrupt_before: z.union([z.literal("*"), z.array(z.string())]).nullish(),
  interrupt_after: z.union([z.literal("*"), z.array(z.string())]).nullish(),
  checkpoint: checkpointRef,
  checkpoint_id: z.string().nullish(),
  webhook: z.string().nullish(),
  after_seconds: z.number().min(0).nullish(),
});
export type RunCreateBody = z.infer<typeof runCreateSchema>;

/** A checked run request, ready for the engine. */
export interface LgRun {
  threadId: string;
  /** A stateless run's thread, made for it and deleted after it unless `on_completion: keep`. */
  stateless: boolean;
  graph: CompiledGraph<BaseState>;
  assistant: LgAssistant;
  input: RunInput<BaseState>;
  config: RunConfig;
  controls: HostControls;
  modes: LgStreamMode[];
  body: RunCreateBody;
}

/** The stream modes asked for (default `values`), an unknown one a 422 naming it. */
export function streamModes(value: RunCreateBody["stream_mode"]): LgStreamMode[] {
  const list =
    value === null || value === undefined ? ["values"] : Array.isArray(value) ? value : [value];
  for (const [i, mode] of list.entries()) {
    const where = ["body", "stream_mode", ...(Array.isArray(value) ? [String(i)] : [])];
    if (!(mode in LG_STREAM_MODES))
      throw unsupported(
        where,
        `unknown stream mode '${mode}' (use ${Object.keys(LG_STREAM_MODES).join(", ")})`,
      );
  }
  return [...new Set(list as LgStreamMode[])];
}

type BreakpointOptions = Pick<RunConfig, "interruptBefore" | "interruptAfter">;

/**
 * `interrupt_before` / `interrupt_after` as the run's breakpoints, each name a node of the
 * graph (else a 422 naming it, before anything is written).
 */
function breakpointsOf(body: RunCreateBody, graph: CompiledGraph<BaseState>): BreakpointOptions {
  const nodes = graph.definition.nodes;
  const out: BreakpointOptions = {};
  for (const [field, option] of [
    ["interrupt_before", "interruptBefore"],
    ["interrupt_after", "interruptAfter"],
  ] as const) {
    const value = body[field];
    if (value === null || value === undefined) continue;
    const unknown = value === "*" ? [] : value.filter((node) => !nodes.has(node));
    if (unknown.length > 0)
      throw new ApiError(422, "VALIDATION_ERROR", `${field}: no node named '${unknown[0]}'`, [
        { loc: ["body", field], msg: `the graph has no node '${unknown[0]}'`, type: "value_error" },
      ]);
    out[option] = value;
  }
  return out;
}

/** The run's input: a command (resume, update, goto), new input, or `null` to continue. */
function runInput(body: RunCreateBody): { input: RunInput<BaseState>; messages: Message[] } {
  const command = body.command;
  if (command) {
    const converted = command.update
      ? ourUpdate(command.update, ["body", "command", "update"])
      : null;
    const hasResume = Object.hasOwn(command, "resume");
    if (!converted && !command.goto) return { input: { resume: command.resume }, messages: [] };
    return {
      input: new Command({
        ...(converted ? { update: converted.update } : {}),
        ...(command.goto ? { goto: command.goto } : {}),
        ...(hasResume ? { resume: command.resume } : {}),
      }) as RunInput<BaseState>,
      messages: converted?.added ?? [],
    };
  }
  if (body.input === null || body.input === undefined) return { input: null, messages: [] };
  const { update, added } = ourUpdate(body.input, ["body", "input"]);
  return { input: update as RunInput<BaseState>, messages: added };
}

/** A run request checked before its thread is touched: what {@link prepareLgRun} runs. */
export interface CheckedLgRun {
  assistant: LgAssistant;
  graph: CompiledGraph<BaseState>;
  breakpoints: BreakpointOptions;
  modes: LgStreamMode[];
  input: RunInput<BaseState>;
  fromVersion: number | undefined;
}

/**
 * Every check of a run request that needs no thread (the assistant, breakpoints, stream modes,
 * input, privileged edits): a refusal here writes nothing. Schedules check their run body with
 * it when made, as each tick will run it.
 */
export function checkLgRun(
  ctx: LgContext,
  user: AuthUser,
  body: RunCreateBody,
  checkBusy = true,
): CheckedLgRun {
  const { assistant, graph } = resolveAssistant(ctx, body.assistant_id);
  if (body.webhook && checkBusy)
    throw unsupported(
      ["body", "webhook"],
      "webhooks are posted for queued runs (runs.create, or stream_resumable) only: their end is recorded to report from",
    );
  const breakpoints = breakpointsOf(body, graph);
  const modes = streamModes(body.stream_mode);
  const { input, messages } = runInput(body);
  refusePrivilegedEdit(ctx.stateEdits, user, { messages });
  const fromId = body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? undefined;
  const fromVersion =
    fromId === undefined ? undefined : versionOf(fromId, ["body", "checkpoint_id"]);
  return { assistant, graph, breakpoints, modes, input, fromVersion };
}

/**
 * Turns a run request into a run: the assistant's graph, the thread (the caller's; made when
 * stateless or `if_not_exists: create`, else a 404), the input, and the engine's config. All
 * checks come before the thread is made: a refused request writes nothing.
 */
export async function prepareLgRun(
  ctx: LgContext,
  user: AuthUser,
  threadIdOrNull: string | null,
  body: RunCreateBody,
  /** `false` for a background run: it checks a busy thread itself, without blocking. */
  checkBusy = true,
  /** A stateless run's thread id (a schedule's tick names it); default a new one. */
  freshThreadId: string = uuidv7(),
): Promise<LgRun> {
  const checked = checkLgRun(ctx, user, body, checkBusy);
  const { assistant, graph, breakpoints, modes, input, fromVersion } = checked;
  const stateless = threadIdOrNull === null;
  const threadId = requireValidId(threadIdOrNull ?? freshThreadId, ["path", "thread_id"]);
  const { read } = await grantThread(ctx.checkpointer, user, threadId, "run on");
  const { checkpoint } = read;
  if (checkpoint) refuseSubgraphThread(checkpoint, "run");
  else refuseChildThreadId(threadId);
  if (!checkpoint && !stateless && body.if_not_exists !== "create")
    throw new ApiError(404, "NOT_FOUND", `Thread '${threadId}' not found`);
  if (!checkpoint)
    await createLgThread(ctx, user, {
      thread_id: threadId,
      metadata: { graph_id: assistant.graph_id },
    });
  const rolledBackTo =
    checkpoint && checkBusy ? await waitOrRefuseBusy(ctx, checkpoint, body) : null;
  const recursionLimit = body.config?.recursion_limit ?? undefined;
  const config: RunConfig = {
    threadId,
    userId: user.id,
    ...(recursionLimit === undefined ? {} : { recursionLimit }),
    ...(fromVersion === undefined ? {} : { fromVersion }),
    ...(fromVersion === undefined && rolledBackTo !== null ? { fromVersion: rolledBackTo } : {}),
    ...breakpoints,
  };
  return {
    threadId,
    stateless,
    graph,
    assistant,
    input,
    config,
    // The check's read stands in for the run's first one while nothing has touched the thread
    // since: not after creating it, nor after waiting for or stopping a running run.
    controls: {
      graphId: assistant.graph_id,
      ...(checkpoint && checkpoint.status !== "running" ? { loadedThread: read } : {}),
    },
    modes,
    body,
  };
}

/**
 * A thread with a run in progress (its lease held live): 409 under `reject` (the default);
 * under `enqueue`, this run waits for it to end; under `interrupt`, it is stopped first; under
 * `rollback`, it is stopped and this run forks from the version before it (returned). A
 * crashed run's lease runs out: then the thread is free, and this run takes it over (the
 * engine's takeover, the ledger replayed), or forks from before it under `rollback`.
 */
async function waitOrRefuseBusy(
  ctx: LgContext,
  checkpoint: ThreadCheckpoint,
  body: RunCreateBody,
): Promise<number | null> {
  const { threadId } = checkpoint;
  if (checkpoint.status !== "running") return null;
  const strategy = body.multitask_strategy ?? "reject";
  if (strategy === "rollback") {
    const before = await versionBeforeRun(ctx, checkpoint);
    await stopRunningRun(ctx, threadId);
    return before;
  }
  if (strategy === "interrupt") {
    await stopRunningRun(ctx, threadId);
    return null;
  }
  if (!(await isRunLeaseHeld(ctx.checkpointer, threadId))) return null;
  if (strategy === "reject")
    throw new ApiError(
      409,
      "THREAD_BUSY",
      `Thread '${threadId}' has a run in progress (multitask_strategy: reject)`,
    );
  await waitForLease(ctx, threadId);
  return null;
}

/** How long `interrupt` waits for a running run to see its stop (it polls within a second). */
const STOP_WAIT_MS = 5000;

/**
 * `multitask_strategy: interrupt` against a run in this or any process: it is asked to stop
 * as `POST /v1/graph/stop` asks (the thread ends `stopped`, every recorded call kept in the
 * ledger), and this run waits for it to. A run that crashed never answers: after the wait the
 * engine takes its thread over, as it does for any run.
 */
export async function stopRunningRun(ctx: LgContext, threadId: string): Promise<void> {
  const running = async () =>
    (await ctx.checkpointer.getCheckpoint(threadId))?.status === "running";
  if (!(await running())) return;
  await ctx.graph.stop({ threadId });
  const deadline = Date.now() + STOP_WAIT_MS;
  while (Date.now() < deadline && (await running())) await pause(ctx, 100);
  await waitForLease(ctx, threadId);
}

async function pause(ctx: LgContext, ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
  if (ctx.closing.signal.aborted)
    throw new ApiError(503, "SHUTTING_DOWN", "The server is shutting down");
}

/** Waits for the thread's run lease to be let go (a crashed run's runs out). */
async function waitForLease(ctx: LgContext, threadId: string): Promise<void> {
  while (await isRunLeaseHeld(ctx.checkpointer, threadId)) await pause(ctx, 200);
}
