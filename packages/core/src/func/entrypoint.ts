import { z } from "zod";
import { isCommand, type Command } from "../definition/command.js";
import { END } from "../definition/edges.js";
import type { BaseState } from "../definition/reducers.js";
import type { CompileOptions } from "../graph/compile-options.js";
import type { CompiledGraph } from "../graph/compiled-graph.js";
import { StateGraph } from "../graph/state-graph.js";
import { copyContext, internalContext, type NodeContext } from "../node/node-context.js";
import type { RunConfig } from "../runtime/run-config.js";
import {
  isResumeInput,
  type ResumeInput,
  type RunInput,
  type RunResult,
} from "../runtime/run-result.js";
import type { StreamConfig, StreamModeOption, StreamOutput } from "../runtime/stream-mode.js";
import { FuncError } from "./func-error.js";
import { withEntrypointScope } from "./task-scope.js";

/** The thread state of an entrypoint: its last input and what it returned. */
export interface EntrypointState<I = unknown, O = unknown> extends BaseState {
  /** The input of the thread's latest `invoke`. */
  input: I | undefined;
  /** What the entrypoint returned when it last ran to its end on this thread. */
  output: O | undefined;
}

/** What an entrypoint's function gets besides its input: its node's context, and more. */
export interface EntrypointContext<O> extends NodeContext {
  /** What the entrypoint returned on this thread's previous run (LangGraph's `previous`). */
  readonly previous: O | undefined;
}

/** `entrypoint`'s options: a name, and what `StateGraph.compile()` takes (a `checkpointer`, …). */
export interface EntrypointOptions extends CompileOptions {
  /** The entrypoint's node name: letters, digits, `_` or `-`, at most 64 characters. */
  name: string;
}

/** A run's result with the entrypoint's return value (`undefined` unless `status` is `"completed"`). */
export type EntrypointResult<I, O> = RunResult<EntrypointState<I, O>> & { output: O | undefined };

/**
 * An entrypoint: a workflow written as one function whose `task` calls are recorded in the tool
 * ledger. `invoke` and `stream` take the input; `{ resume, interruptId? }` or
 * `new Command({ resume })` to answer an interrupt (so an input object with a `resume` field
 * must be wrapped); or `null` to continue a stopped, failed or crashed run.
 */
export interface Entrypoint<I, O> {
  readonly name: string;
  /** The one-node graph it runs as: `getState`, `getToolLedger`, `stop`, … */
  readonly graph: CompiledGraph<EntrypointState<I, O>>;
  invoke(
    input: I | Command | ResumeInput | null,
    config?: RunConfig,
  ): Promise<EntrypointResult<I, O>>;
  stream<const M extends StreamModeOption = "events">(
    input: I | Command | ResumeInput | null,
    config?: StreamConfig<M>,
  ): AsyncGenerator<StreamOutput<EntrypointState<I, O>, M>>;
}

const ENTRYPOINT_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const optionsSchema = z.looseObject({ name: z.string().regex(ENTRYPOINT_NAME) });

/**
 * Defines an entrypoint: `fn` runs as the one node of a graph compiled with `options`, so a run
 * has everything a graph run has (a thread, a checkpointer, `interrupt()`, deadlines, stop).
 * Each `task` it calls is a ledger call keyed by the run's step and the call's place: when the
 * entrypoint runs again (a resume, a run continued after a crash), finished tasks return their
 * recorded results and only the rest run. Code between tasks runs again, so keep side effects,
 * the clock and randomness in tasks.
 *
 * @example
 * const workflow = entrypoint({ name: "refund", checkpointer }, async (orderId: string) => {
 *   const order = await lookUp(orderId);
 *   const approved = interrupt<boolean>(order, { message: "Refund this order?" });
 *   return approved ? await refund(order) : "declined";
 * });
 * await workflow.invoke("4821", { threadId: "t-1" });
 */
export function entrypoint<I = unknown, O = unknown>(
  options: EntrypointOptions,
  fn: (input: I, ctx: EntrypointContext<Awaited<O>>) => O | Promise<O>,
): Entrypoint<I, Awaited<O>> {
  type S = EntrypointState<I, Awaited<O>>;
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new FuncError(
      "FUNC_002",
      "entrypoint(options, fn): options.name must be 1-64 letters, digits, '_' or '-'",
    );
  }
  if (typeof fn !== "function") {
    throw new FuncError(
      "FUNC_002",
      `entrypoint('${options.name}'): the entrypoint must be a function, got ${typeof fn}`,
    );
  }
  const { name, ...compileOptions } = options;
  const graph = new StateGraph<S>()
    .addNode(name, async (state: S, nodeContext: NodeContext) => {
      const ctx = internalContext(nodeContext);
      const entryCtx = entrypointContext(nodeContext, state.output);
      const output = await withEntrypointScope(ctx, () => fn(state.input as I, entryCtx));
      return { output } as Partial<S>;
    })
    .setEntryPoint(name)
    .addEdge(name, END)
    .compile(compileOptions);
  // `{ resume }` answers an interrupt here as in every graph (see `isResumeInput`).
  const runInput = (input: I | Command | ResumeInput | null): RunInput<S> =>
    input === null || isCommand(input) || isResumeInput(input)
      ? (input as Command | ResumeInput | null)
      : ({ input } as Partial<S>);
  return {
    name,
    graph,
    async invoke(input, config) {
      const result = await graph.invoke(runInput(input), config);
      const output = result.status === "completed" ? result.state.output : undefined;
      return { ...result, output };
    },
    stream(input, config) {
      return graph.stream(runInput(input), config);
    },
  };
}

/** The node's context with `previous` (copied as `internalContext` copies it). */
function entrypointContext<O>(ctx: NodeContext, previous: O | undefined): EntrypointContext<O> {
  const context: NodeContext & { previous?: O } = copyContext(ctx);
  context.previous = previous;
  return context as EntrypointContext<O>;
}
