import { AsyncLocalStorage } from "node:async_hooks";
import { InvalidRunError } from "../errors/errors.js";
import type { Interrupt } from "../storage/checkpointer.js";

/** Thrown through user code by `interrupt()`; never escapes the run loop. */
export class InterruptSignal {
  constructor(readonly interrupts: Interrupt[]) {}
}

/** True for the signal `interrupt()` throws. */
export function isInterruptSignal(value: unknown): value is InterruptSignal {
  return value instanceof InterruptSignal;
}

/** Where `interrupt()` is being called from: the answers it may return and how it names itself. */
interface InterruptScope {
  /** Prefix of the ids of interrupts raised in this scope. */
  idBase: string;
  node: string;
  toolCallId?: string;
  answers: Readonly<Record<string, unknown>>;
  /** How many times `interrupt()` ran in this scope so far; the n-th gets suffix `:n` (n > 0). */
  calls: number;
}

const scopes = new AsyncLocalStorage<InterruptScope>();

/** Runs `fn` with `interrupt()` bound to a scope. */
export function withInterruptScope<T>(scope: Omit<InterruptScope, "calls">, fn: () => T): T {
  // Named field by field: a spread with a new key is V8's slow path, and this runs per node and call.
  const { idBase, node, toolCallId, answers } = scope;
  return scopes.run({ idBase, node, toolCallId, answers, calls: 0 }, fn);
}

/** The id the n-th `interrupt()` of a scope gets. */
export function interruptId(idBase: string, index: number): string {
  return index === 0 ? idBase : `${idBase}:${index}`;
}

/**
 * Pauses the run for an answer from outside, from inside a node or a tool.
 *
 * The first time, it throws a signal the runtime catches: the run ends with status
 * `"interrupted"` and reports `{ id, value, message }`. Resuming with `{ resume: answer }` runs
 * the node again, and this call then returns `answer`. Code before `interrupt()` runs again on
 * resume, so put side effects after it.
 *
 * @example
 * const decision = interrupt({ order_id, amount }, { message: `Refund ${amount}?` });
 * if (!decision?.approved) return "Refund declined";
 * return issueRefund(order_id, amount);   // after the interrupt: runs once
 */
export function interrupt<Answer = unknown>(
  value: unknown,
  options: { message?: string; id?: string; resumeAt?: Date | string } = {},
): Answer {
  const scope = scopes.getStore();
  if (!scope) {
    throw new Error("interrupt() was called outside a running node or tool");
  }
  // Only unnamed interrupts are numbered, so a named one (the in-doubt question) never shifts
  // the ids of the others.
  const id = options.id
    ? `${scope.idBase}:${options.id}`
    : interruptId(scope.idBase, scope.calls++);
  if (Object.hasOwn(scope.answers, id)) return scope.answers[id] as Answer;
  const raised: Interrupt = { id, value, node: scope.node };
  if (options.message !== undefined) raised.message = options.message;
  if (scope.toolCallId !== undefined) raised.toolCallId = scope.toolCallId;
  if (options.resumeAt !== undefined) raised.resumeAt = wakeTime(options.resumeAt);
  throw new InterruptSignal([raised]);
}

/**
 * The body of `ctx.sleep(ms)`: an interrupt whose timer answers it `ms` from now. Checked
 * before the scope is read, so a bad duration fails the same inside and outside a node.
 */
export function sleepInterrupt(ms: number): Promise<void> {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    throw new InvalidRunError(
      "TIMER_001",
      `ctx.sleep(ms) takes a finite number of milliseconds, at least 0; got ${describe(ms)}`,
    );
  }
  interrupt(
    { sleep_ms: ms },
    { resumeAt: new Date(Date.now() + ms), message: `Sleeping ${ms} ms` },
  );
  return Promise.resolve();
}

/** `resumeAt` as the ISO string an interrupt stores, or `TIMER_002`. */
function wakeTime(resumeAt: Date | string): string {
  const time =
    resumeAt instanceof Date
      ? resumeAt.getTime()
      : typeof resumeAt === "string"
        ? Date.parse(resumeAt)
        : Number.NaN;
  if (Number.isNaN(time)) {
    throw new InvalidRunError(
      "TIMER_002",
      `interrupt(value, { resumeAt }) takes a Date or an ISO 8601 date string; got ${describe(resumeAt)}`,
    );
  }
  return new Date(time).toISOString();
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
