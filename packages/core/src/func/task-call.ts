import { NodeTimeoutError, errorText } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { withFields, type Logger } from "../events/logger.js";
import { abortOnLost } from "../ledger/abort-on-lost.js";
import { argsDigest } from "../ledger/args-digest.js";
import { planCalls } from "../ledger/claim.js";
import { durableCall, type CallAttempt, type ToolRun } from "../ledger/durable-call.js";
import type { LedgerCall, LedgerTool } from "../ledger/ledger-call.js";
import { toolTimeoutMs } from "../ledger/tool-timeout.js";
import { Message, type ToolMessage } from "../messages/message.js";
import { toolErrorMessage } from "../messages/tool-result.js";
import { runWithDeadline, type DeadlineScope } from "../node/deadline.js";
import { isInterruptSignal, withInterruptScope } from "../node/interrupt.js";
import { inNamespace, type InternalNodeContext } from "../node/node-context.js";
import { findNonJson } from "../storage/json-check.js";
import { FuncError } from "./func-error.js";
import { insideTask } from "./task-scope.js";
import { decodeTaskValue, encodeTaskValue } from "./task-value.js";

/** What a task's function (and its `reconcile`) gets besides its input. */
export interface TaskContext {
  /**
   * The task call's ledger key, the same on every attempt and replay of this call: hand it to
   * a provider that takes an idempotency key, so a retried attempt cannot act twice there.
   */
  readonly idempotencyKey: string;
  /** Aborts on the task's deadline, on stop, and when its claim is taken over. */
  readonly signal: AbortSignal;
  /** The ledger attempt this execution runs (2 and more after an in-doubt `retry`). */
  readonly attempt: number;
  readonly threadId: string;
  readonly runId: string;
  readonly logger: Logger;
  /** Sends `data` to `stream(input, { streamMode: "custom" })` consumers. */
  write(data: unknown): void;
}

/** A task as the ledger sees it: its name, deadline and in-doubt policy, and its function. */
export interface TaskSpec {
  readonly tool: LedgerTool;
  readonly fn: (input: unknown, ctx: TaskContext) => unknown;
}

/**
 * The ledger key of the `index`-th task call of the entrypoint's node run: the step it runs as
 * (the same on a resume or a replay after a crash, a new one for the next `invoke`), the call's
 * place and the task's name, in the branch's namespace as a tool call's key is.
 */
export function taskLedgerKey(ctx: InternalNodeContext, index: number, name: string): string {
  return inNamespace(ctx.runtime.ledgerNamespace, `task:${ctx.step}:${index}:${name}`);
}

/**
 * One task call through the tool ledger, on the path a tool call takes (`durableCall`): claimed,
 * run under its deadline and recorded as soon as it returns; replayed when recorded; in doubt
 * (its `onInDoubt` decides) when a gone execution started it and never recorded it. Resolves
 * with the task's value; rejects with `FUNC_003` for a recorded failure, `FUNC_004` when the
 * call was recorded with another input.
 */
export async function callTask(
  spec: TaskSpec,
  input: unknown,
  index: number,
  ctx: InternalNodeContext,
): Promise<unknown> {
  const key = taskLedgerKey(ctx, index, spec.tool.name);
  const notJson = findNonJson(input, "input");
  if (notJson !== null) {
    throw new FuncError(
      "FUNC_002",
      `task '${spec.tool.name}' was called with an input that is not JSON (${notJson}); nothing ran`,
    );
  }
  const call: LedgerCall = {
    call: { id: key },
    tool: spec.tool,
    args: input,
    origin: key,
    argsDigest: argsDigest(JSON.stringify(input ?? null)),
    key,
    unscopedKey: null,
    recordedToolName: spec.tool.name,
    log: withFields(ctx.logger, { task: spec.tool.name, key }),
  };
  const event = { node: ctx.node, key, toolCallId: key, toolName: spec.tool.name };
  return withInterruptScope(
    { idBase: key, node: ctx.node, toolCallId: key, answers: ctx.runtime.resumeAnswers },
    async () => {
      ctx.emit({ type: "tool_start", ...event });
      const [plan] = await planCalls([call], ctx);
      const outcome = await durableCall(
        call,
        plan!,
        {
          run: (attempt) => runTask(spec, call, attempt, ctx),
          context: (attempt, scope) => taskContext(call, attempt, scope, ctx),
          // Tasks run one after another: each is recorded as it returns, never left to ride in
          // the step's write, which comes only when the whole entrypoint has returned.
          returnedLast: () => Promise.resolve(false),
        },
        ctx,
      );
      const { message, replayed } = outcome;
      ctx.emit({
        type: "tool_result",
        ...event,
        replayed,
        isError: message.isError === true,
        message,
      });
      if (message.isError === true) throw recordedFailure(spec.tool.name, index, message);
      return decodeTaskValue(message.content);
    },
  );
}

/**
 * The task's function once, under its deadline. Its failure (a throw, a result that is not
 * JSON, a timeout) is a result, recorded like a value; what is not of this attempt to record
 * (paused in `interrupt()`, stopped, its claim taken over) is thrown for the ledger to handle.
 */
async function runTask(
  spec: TaskSpec,
  call: LedgerCall,
  running: CallAttempt,
  ctx: InternalNodeContext,
): Promise<ToolRun> {
  const { attempt, held } = running;
  const name = spec.tool.name;
  const timeoutMs = toolTimeoutMs(call, ctx);
  const done = (message: ToolMessage, errorCode: string | null): ToolRun => ({
    message,
    errorCode,
    changes: {},
    updates: [],
  });
  try {
    const value = await runWithDeadline(
      (scope) => {
        running.started = true;
        const taskCtx = taskContext(call, attempt ?? 0, scope, ctx);
        return insideTask(() => spec.fn(call.args, taskCtx));
      },
      {
        parent: ctx.runtime.nodeAbort,
        timeoutMs,
        onTimeout: () => new NodeTimeoutError("tool", name, (timeoutMs ?? 0) / 1000),
        abortHandle: held ? (abort) => (held.onLost = abortOnLost(call, abort)) : undefined,
      },
    );
    return done(Message.tool(call.call.id, encodeTaskValue(value)), null);
  } catch (error) {
    if (
      isTenxgraphError(error, "TOOL_CONFLICT_002") ||
      isInterruptSignal(error) ||
      ctx.runtime.nodeAbort.aborted
    ) {
      throw error;
    }
    const code = isTenxgraphError(error, "NODE_TIMEOUT_002")
      ? "NODE_TIMEOUT_002"
      : "TOOL_ERROR_001";
    call.log.warn({ task: name, key: call.key, err: error }, `Task failed: ${errorText(error)}`);
    return done(toolErrorMessage(name, call.call.id, code, errorText(error)), code);
  } finally {
    if (held) held.onLost = undefined;
  }
}

function taskContext(
  call: LedgerCall,
  attempt: number,
  scope: DeadlineScope,
  ctx: InternalNodeContext,
): TaskContext {
  return {
    idempotencyKey: call.key!,
    get signal() {
      return scope.signal;
    },
    attempt,
    threadId: ctx.threadId,
    runId: ctx.runId,
    logger: call.log,
    write: (data) => ctx.write(data),
  };
}

/**
 * The error a failed task call rejects with, the same whether it failed now or is replayed.
 * The recorded message is the tool layer's `Tool '<name>' failed: [<CODE>] <why>`.
 */
function recordedFailure(name: string, index: number, message: ToolMessage): FuncError {
  const text = Message.text(message);
  const code = /failed: \[([A-Z0-9_]+)\]/.exec(text)?.[1];
  if (code === "TOOL_CONFLICT_003") {
    return new FuncError(
      "FUNC_004",
      `task '${name}' (call ${index} of the entrypoint) was recorded with another input: the ` +
        `entrypoint is not deterministic; read the clock, random numbers and outside data in ` +
        `tasks, so a replay takes the same path`,
    );
  }
  const why = text.replace(/^Tool '[^']*' failed: /, "");
  return new FuncError("FUNC_003", `task '${name}' (call ${index}) failed: ${why}`);
}
