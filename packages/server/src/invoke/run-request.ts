import type { Context } from "@opentelemetry/api";
import { uuidv7, type HostControls } from "@tenxgraph/core/host";
import type { BaseState, Message, ResumeInput, RunConfig, RunInput } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { validationError } from "../http/api-error.js";
import { grantedRead, type ThreadGrant } from "../threads/ownership.js";
import { refusePrivilegedEdit } from "../threads/state-edit-policy.js";
import { remoteAnswers, remoteToolSpecs, specsForPending } from "./remote-tools.js";
import { generateThreadName, THREAD_NAME_FIELD } from "../threads/thread-name.js";
import { runConfigSchema, type GraphInput } from "../wire/request-schemas.js";
import { track } from "../http/shutdown.js";
import type { InvokeContext } from "./invoke-context.js";
import type { AuthUser } from "../http/server-env.js";
import { fromWireMessage } from "../wire/convert-message.js";
import { LG_THREAD_FIELD } from "../wire/thread-name-field.js";
import { refuseChildThreadId, refuseSubgraphThread } from "../threads/subgraph-threads.js";
import { requireValidId } from "../http/request-limits.js";

/** A checked invoke/stream request, ready for `graph.invoke` or `graph.stream`. */
export interface PreparedRun {
  threadId: string;
  isNewThread: boolean;
  input: RunInput<BaseState>;
  /**
   * Answers to run before `input`, one resume each: a request answering several remote tool
   * calls gives one answer per call, and a run takes one.
   */
  earlierAnswers: ResumeInput[];
  config: RunConfig;
  /** What the server steers the run with beside `config` (the checkpoint it already read). */
  controls: HostControls;
  /** The messages the client sent, with ids minted. */
  inputMessages: Message[];
  /** Transcript length before the run: the run's own messages come after it. */
  messagesBefore: number;
  /** A new thread's generated name, stored by the run's first write. */
  threadName?: string;
}

/**
 * The transcript's length where the run starts: the latest version's, or a fork's version's (a
 * version the thread does not keep fails the run itself, with `THREAD_005`).
 */
async function messagesBefore(
  ctx: InvokeContext,
  threadId: string,
  checkpoint: ThreadCheckpoint | null,
  fromVersion: number | undefined,
): Promise<number> {
  if (fromVersion === undefined || checkpoint === null) return checkpoint?.messageCount ?? 0;
  const forked = await ctx.checkpointer.getVersion(threadId, fromVersion);
  return forked?.messageCount ?? 0;
}

/** State fields a client may not set through `initial_state`: they belong to the runtime. */
const RESERVED_FIELDS = new Set([
  "messages",
  "context",
  "context_summary",
  "execution_meta",
  THREAD_NAME_FIELD,
  LG_THREAD_FIELD,
]);

/**
 * Turns a request into a run: the thread id (minted when absent, blank or `"0"`), ownership
 * checked, the user taken from authentication only (a client's `config.user`/`user_id` never
 * wins), and the input as a new turn, an interrupt answer or a continuation.
 */
export async function prepareRun(
  ctx: InvokeContext,
  user: AuthUser,
  body: GraphInput,
  /** The request's trace context: the run's span is its child (see `requestTraceContext`). */
  traceContext?: Context,
  /** The caller's grant to run on the thread: its read stands in for the check's, if it fits. */
  grant?: ThreadGrant,
): Promise<PreparedRun> {
  const parsed = runConfigSchema.safeParse(body.config ?? {});
  if (!parsed.success) throw validationError("body.config", parsed.error);
  const given = String(parsed.data.thread_id ?? "").trim();
  const threadId = given === "" || given === "0" ? uuidv7() : given;
  requireValidId(threadId, ["body", "config", "thread_id"]);
  const read = await grantedRead(ctx.checkpointer, user, threadId, "run on", grant);
  const { checkpoint } = read;
  if (checkpoint) refuseSubgraphThread(checkpoint, "run");
  else refuseChildThreadId(threadId);
  const inputMessages = body.messages.map(fromWireMessage);
  const answers =
    body.resume === undefined && body.continue !== true
      ? remoteAnswers(checkpoint, threadId, inputMessages)
      : null;
  // A new turn's messages join the transcript as a state edit does: tool calls or tool results
  // in them (other than answers to pending remote calls) would let the caller decide what runs.
  if (!answers && body.resume === undefined && body.continue !== true)
    refusePrivilegedEdit(ctx.stateEdits, user, { messages: inputMessages });
  // The calls waiting keep their tools even when a client resumes without `remote_tools`.
  const remoteTools = remoteToolSpecs(parsed.data.remote_tools ?? []);
  for (const spec of specsForPending(checkpoint))
    if (!remoteTools.some((t) => t.name === spec.name)) remoteTools.push(spec);
  const config: RunConfig = {
    threadId,
    userId: user.id,
    recursionLimit: body.recursion_limit,
    ...(parsed.data.node_timeout === undefined ? {} : { nodeTimeout: parsed.data.node_timeout }),
    ...(parsed.data.tool_timeout === undefined ? {} : { toolTimeout: parsed.data.tool_timeout }),
    ...(parsed.data.durable_checkpoint_every_step === undefined
      ? {}
      : { durableCheckpointEveryStep: parsed.data.durable_checkpoint_every_step }),
    ...(remoteTools.length > 0 ? { remoteTools } : {}),
    ...(parsed.data.from_version === undefined ? {} : { fromVersion: parsed.data.from_version }),
  };
  // The run starts from the thread as read for ownership instead of reading it again, unless
  // earlier answers run first and move the thread.
  const controls: HostControls = {
    graphId: ctx.graphId,
    ...(answers && answers.length > 1 ? {} : { loadedThread: read }),
    ...(traceContext ? { traceContext } : {}),
  };
  // A new thread's name is part of its first checkpoint: stored with the run's start write.
  const threadName =
    checkpoint === null && !answers && body.resume === undefined && body.continue !== true
      ? await generateThreadName(ctx, threadId, inputMessages)
      : undefined;
  const input = answers ? answers.at(-1)! : runInput(body, inputMessages, threadName);
  return {
    threadId,
    isNewThread: checkpoint === null,
    ...(threadName === undefined ? {} : { threadName }),
    input,
    earlierAnswers: answers ? answers.slice(0, -1) : [],
    config,
    controls,
    inputMessages,
    messagesBefore: await messagesBefore(ctx, threadId, checkpoint, parsed.data.from_version),
  };
}

function runInput(
  body: GraphInput,
  messages: Message[],
  threadName: string | undefined,
): RunInput<BaseState> {
  if (body.resume !== undefined) {
    return body.interrupt_id === undefined
      ? { resume: body.resume }
      : { resume: body.resume, interruptId: body.interrupt_id };
  }
  if (body.continue === true) return null;
  const fields = Object.fromEntries(
    Object.entries(body.initial_state ?? {}).filter(([key]) => !RESERVED_FIELDS.has(key)),
  );
  if (threadName !== undefined) fields[THREAD_NAME_FIELD] = threadName;
  return { ...fields, messages } as Partial<BaseState>;
}

/**
 * Runs the request's earlier answers, each to its pause: the thread then waits only for the
 * call `run.input` answers. Each recorded result replays in the runs after it.
 */
export async function runEarlierAnswers(ctx: InvokeContext, run: PreparedRun): Promise<void> {
  // No `loadedThread` here: prepareRun leaves it out when there are earlier answers.
  for (const answer of run.earlierAnswers) await track(ctx, ctx.graph.invoke(answer, run.config));
}
