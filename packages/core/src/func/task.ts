import { z } from "zod";
import { FuncError } from "./func-error.js";
import { callTask, type TaskContext, type TaskSpec } from "./task-call.js";
import { takeTaskPlace, trackTask } from "./task-scope.js";

/**
 * What happens to a task call that a gone execution started and never recorded (the process
 * died while it ran): the tool ledger's `onInDoubt` policies, with the task's input as `args`.
 */
export type TaskInDoubtPolicy<I> =
  "retry" | "fail" | "interrupt" | { reconcile(input: I, ctx: TaskContext): unknown };

/** How a task runs besides its function. */
export interface TaskOptions<I> {
  /** Seconds the task may run; the run's `toolTimeout` otherwise. `null`, 0 or `Infinity`: none. */
  timeout?: number | null;
  /** What to do with a call in doubt (default `"retry"`: it runs again, as a new attempt). */
  onInDoubt?: TaskInDoubtPolicy<I>;
}

/** A task's options with its name, LangGraph.js's `task({ name }, fn)` form. */
export interface NamedTaskOptions<I> extends TaskOptions<I> {
  name: string;
}

/** A task: call it from an entrypoint; its result is recorded and replayed, never run twice. */
export interface Task<I, O> {
  (input: I): Promise<O>;
  readonly taskName: string;
}

const TASK_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const optionsSchema = z
  .object({
    timeout: z
      .number()
      .refine((n) => !Number.isNaN(n), "must be a number of seconds")
      .nullable()
      .optional(),
    onInDoubt: z
      .union([
        z.enum(["retry", "fail", "interrupt"]),
        z.object({ reconcile: z.custom<() => unknown>((v) => typeof v === "function") }),
      ])
      .optional(),
  })
  .strict();

/**
 * Defines a task: a step of an entrypoint whose result is recorded in the tool ledger, keyed by
 * the entrypoint's run (its step) and the call's place among the tasks it called. A replay of
 * the entrypoint (a resume after `interrupt()`, a run continued after a crash) returns the
 * recorded result and does not run the task again; a call that started and was never recorded
 * is in doubt, and `onInDoubt` decides. The input and result are plain JSON.
 *
 * @example
 * const chargeCard = task(
 *   "charge_card",
 *   async (order: { id: string; cents: number }, ctx) =>
 *     payments.charge(order, { idempotencyKey: ctx.idempotencyKey }),
 *   { onInDoubt: { reconcile: (order, ctx) => payments.find(ctx.idempotencyKey) } },
 * );
 */
export function task<I = void, O = unknown>(
  nameOrOptions: string | NamedTaskOptions<I>,
  fn: (input: I, ctx: TaskContext) => O | Promise<O>,
  options: TaskOptions<I> = {},
): Task<I, Awaited<O>> {
  const { name, ...given } =
    typeof nameOrOptions === "object" && nameOrOptions !== null
      ? nameOrOptions
      : { name: nameOrOptions, ...options };
  const spec = taskSpec(name, fn, given);
  const run = (input: I): Promise<Awaited<O>> => {
    try {
      const { ctx, index } = takeTaskPlace(spec.tool.name);
      return trackTask(callTask(spec, input, index, ctx)) as Promise<Awaited<O>>;
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return Object.defineProperty(run, "taskName", {
    value: spec.tool.name,
    enumerable: true,
  }) as Task<I, Awaited<O>>;
}

/** The task checked (`FUNC_002` naming what is wrong) and in the ledger's terms. */
function taskSpec(name: unknown, fn: unknown, options: unknown): TaskSpec {
  const shown = typeof name === "string" ? `'${name}'` : String(name);
  if (typeof name !== "string" || !TASK_NAME.test(name)) {
    throw new FuncError(
      "FUNC_002",
      `task(${shown}): name must be 1-64 letters, digits, '_' or '-'`,
    );
  }
  if (typeof fn !== "function") {
    throw new FuncError(
      "FUNC_002",
      `task(${shown}): the task must be a function, got ${typeof fn}`,
    );
  }
  const parsed = optionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join(".") || "(options)"}: ${issue.message}`)
      .join("; ");
    throw new FuncError("FUNC_002", `task(${shown}): bad options: ${issues}`);
  }
  const { timeout, onInDoubt = "retry" } = options as TaskOptions<unknown>;
  return {
    tool: {
      name,
      timeout,
      onInDoubt: onInDoubt as TaskSpec["tool"]["onInDoubt"],
    },
    fn: fn as TaskSpec["fn"],
  };
}
