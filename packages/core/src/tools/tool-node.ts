import type { CallToClaim, GraphNode, NodeOutput } from "../definition/graph-node.js";
import type { BaseState } from "../definition/reducers.js";
import { Message, type AssistantMessage, type ToolMessage } from "../messages/message.js";
import { planCalls } from "../ledger/claim.js";
import type { CallPlan } from "../ledger/call-plan.js";
import { InterruptSignal, isInterruptSignal } from "../node/interrupt.js";
import type { Interrupt } from "../storage/checkpointer.js";
import {
  internalContext,
  type InternalNodeContext,
  type NodeContext,
} from "../node/node-context.js";
import type { CallOutcome } from "../ledger/durable-call.js";
import { executeCall, type Branch } from "./execute-call.js";
import { gotoOf } from "./tool-command.js";
import { Command } from "../definition/command.js";
import type { Send } from "../definition/send.js";
import { applyCallUpdates, mergeBranches, snapshotFields } from "../definition/branch-merge.js";
import { branchState, TOOL_CALL_WRITERS } from "./parallel-calls.js";
import {
  callOrigin,
  parseArguments,
  prepareCall,
  type PreparedCall,
  type ReadyCall,
  type RejectedCall,
} from "./prepared-call.js";
import type { RemoteToolSpec } from "../node/remote-tool-spec.js";
import { remoteTool, remoteToolsOf } from "./remote-tool.js";
import type { AnyTool, Tool } from "./tool.js";

/**
 * Runs the tool calls of the last assistant message, in parallel, each through the tool ledger:
 * a call recorded before is replayed instead of run, so a crash, stop or resume never repeats a
 * tool that already completed. Every call settles before the node returns; each failure becomes
 * that call's tool error message.
 *
 * @example
 * graph.addNode("TOOL", new ToolNode([lookupOrder, chargeCard, sendReceipt]));
 */
export class ToolNode<S extends BaseState = BaseState> implements GraphNode<S> {
  readonly #tools: ReadonlyMap<string, AnyTool>;
  /** Remote tools attached after construction (see {@link attachRemoteTools}). */
  readonly #remote = new Map<string, AnyTool>();

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tools' arguments vary
  constructor(tools: readonly Tool<any, S>[]) {
    const byName = new Map<string, AnyTool>();
    for (const tool of tools) {
      if (byName.has(tool.name))
        throw new TypeError(`ToolNode: two tools are named '${tool.name}'`);
      byName.set(tool.name, tool as unknown as AnyTool);
    }
    this.#tools = byName;
  }

  /** The tools (remote ones attached included), for model adapters that send their schemas. */
  get tools(): AnyTool[] {
    return [...this.#tools.values(), ...this.#remote.values()];
  }

  /**
   * The tools a run of this node can call: its own, the remote ones attached, and the run's
   * `remoteTools`. A run's remote tool never shadows a tool the node already has.
   */
  toolsFor(ctx: NodeContext): AnyTool[] {
    return [...this.#toolMap(internalContext(ctx)).values()];
  }

  /**
   * Attaches tools that the caller runs (see `remoteTool`): a call pauses the run for the
   * caller's result. Attaching a name again replaces that remote tool; the name of one of the
   * node's own tools is refused with a `TypeError`. Affects every later run of this node.
   */
  attachRemoteTools(specs: readonly RemoteToolSpec[]): void {
    const made = specs.map(remoteTool);
    for (const tool of made) {
      if (this.#tools.has(tool.name))
        throw new TypeError(`ToolNode: '${tool.name}' is one of this node's own tools`);
    }
    for (const tool of made) this.#remote.set(tool.name, tool);
  }

  #toolMap(ctx: Pick<InternalNodeContext, "runtime">): ReadonlyMap<string, AnyTool> {
    const perRun = remoteToolsOf(ctx.runtime.remoteTools);
    if (this.#remote.size === 0 && perRun.size === 0) return this.#tools;
    const all = new Map(this.#tools);
    for (const [name, tool] of [...this.#remote, ...perRun])
      if (!all.has(name)) all.set(name, tool);
    return all;
  }

  /**
   * The calls of the last assistant message whose claims may be written ahead, with the step
   * that issued them (ledger protocol v2): those of this node's own tools whose in-doubt policy
   * is `retry`, keyed by their message, with arguments the tool accepts. A call with a domain
   * key, a remote tool, or any other policy is claimed when the node runs, as before: `fail`,
   * `interrupt` and `reconcile` must know whether an attempt really started.
   */
  claimsAhead(state: S): CallToClaim[] {
    const issuer = state.messages.at(-1);
    if (issuer?.role !== "assistant" || !issuer.toolCalls?.length) return [];
    const shared = sharedCallIds(issuer.toolCalls);
    return issuer.toolCalls.flatMap((call, index) => {
      const tool = this.#tools.get(call.name);
      if (!tool || tool.onInDoubt !== "retry" || tool.idempotencyKey) return [];
      if (!parseArguments(call, tool).ok) return [];
      // In the plain chain's namespace: the run loop puts it in the branch's (`inNamespace`).
      const key = callOrigin(issuer.id, call, index, shared.has(call.id), "");
      return key === null ? [] : [{ key, toolName: tool.name }];
    });
  }

  async run(state: S, nodeContext: NodeContext): Promise<NodeOutput<S>> {
    const ctx = internalContext(nodeContext);
    const issuer = state.messages.at(-1);
    if (issuer?.role !== "assistant" || !issuer.toolCalls?.length) {
      ctx.logger.warn({}, "ToolNode ran but the last message has no tool calls: nothing to do");
      return;
    }
    const shared = sharedCallIds(issuer.toolCalls);
    const tools = this.#toolMap(ctx);
    const prepared = issuer.toolCalls.map((call, index) =>
      prepareCall(call, index, issuer.id, tools, ctx, shared.has(call.id)),
    );
    const ready = prepared.filter((call): call is ReadyCall => call.ok);
    const plans = new Map<ReadyCall, CallPlan>();
    (await planCalls(ready, ctx)).forEach((plan, i) => plans.set(ready[i]!, plan));

    // Every call works on a private copy (cheap for a state with no fields), merged back once
    // it settled: a tool that outlives its deadline keeps writing only to its own discarded copy.
    const baseline = snapshotFields(state);
    const transcript = state.messages.slice();
    const going = new Set(prepared);
    const settled = await Promise.allSettled(
      prepared.map(async (call) => {
        const branch: Branch<S> = { state: branchState(state, baseline, transcript), baseline };
        const plan = call.ok ? plans.get(call)! : null;
        // The calls that return last, together, leave their records to the step's write (v2).
        const returnedLast = async () => {
          going.delete(call);
          await new Promise((resolve) => setImmediate(resolve));
          return going.size === 0;
        };
        try {
          return await this.#runOne(call, plan, branch, ctx, returnedLast);
        } finally {
          going.delete(call);
        }
      }),
    );
    return this.#collect(issuer, settled, state, ctx);
  }

  /** Runs one call (or reports one rejected before running) between its two events. */
  async #runOne(
    call: PreparedCall,
    plan: CallPlan | null,
    branch: Branch<S>,
    ctx: InternalNodeContext,
    returnedLast: () => Promise<boolean>,
  ): Promise<CallOutcome> {
    const { id: toolCallId, name: toolName } = call.call;
    const key = call.ok ? call.key : null;
    ctx.emit({ type: "tool_start", node: ctx.node, key, toolCallId, toolName });
    const outcome = call.ok
      ? await executeCall(call, plan!, branch, ctx, returnedLast)
      : rejected(call, ctx);
    ctx.emit({
      type: "tool_result",
      node: ctx.node,
      key,
      toolCallId,
      toolName,
      replayed: outcome.replayed,
      isError: outcome.message.isError === true,
      message: outcome.message,
    });
    return outcome;
  }

  /**
   * Turns the settled calls into the node's update. If any call paused, all pauses are raised
   * together; the calls that finished are already in the ledger and replay on resume.
   */
  #collect(
    issuer: AssistantMessage,
    settled: PromiseSettledResult<CallOutcome>[],
    state: S,
    ctx: InternalNodeContext,
  ): NodeOutput<S> {
    const interrupts: Interrupt[] = [];
    const failures: unknown[] = [];
    const messages: ToolMessage[] = [];
    const branches: (Pick<CallOutcome, "changes" | "updates"> & { toolCallId: string })[] = [];
    const goto: (string | Send<unknown>)[] = [];
    const handoff: string[] = [];
    settled.forEach((result, i) => {
      const call = issuer.toolCalls![i]!;
      if (result.status === "fulfilled") {
        messages.push(result.value.message);
        const recorded = gotoOf(result.value.goto ?? []);
        goto.push(...recorded.goto);
        handoff.push(...recorded.parent);
        const { changes, updates } = result.value;
        branches.push({ toolCallId: call.id, changes, updates });
      } else if (isInterruptSignal(result.reason)) {
        interrupts.push(...result.reason.interrupts);
      } else {
        failures.push(result.reason);
      }
    });
    const { nodeAbort } = ctx.runtime;
    if (nodeAbort.aborted) throw nodeAbort.reason;
    // A tool's own failure is already a message; what is left failed around the tool (a fault,
    // a bug): the node fails as a crash would, after every sibling settled and was recorded.
    if (failures.length > 0) throw failures[0];
    if (interrupts.length > 0) throw new InterruptSignal(interrupts);
    const changed = branches.map(({ toolCallId, changes }) => ({ id: toolCallId, changes }));
    mergeBranches(state, changed, ctx.runtime.reducers, ctx.logger, TOOL_CALL_WRITERS);
    // The same path for one call as for many: every update through the reducers, in call order.
    applyCallUpdates(state, branches, ctx.runtime.reducers);
    // Fields are merged and updated in `state` (the node's own copy); only the messages are new.
    // A handoff ends the child's run: the parent goes where the tools said (in call order).
    if (handoff.length > 0) {
      return new Command({ update: messages, goto: handoff, graph: Command.PARENT });
    }
    // The tools' `goto`s, in call order, are the node's: the run goes there and along its edges.
    return goto.length > 0 ? new Command({ update: messages, goto }) : messages;
  }
}

/** A call refused before it ran (unknown tool, bad arguments): its error message, not ledgered. */
function rejected(call: RejectedCall, ctx: InternalNodeContext): CallOutcome {
  const { message } = call;
  ctx.runtime.tracing.refusedCall(ctx.runtime.traceContext, call.call, call.code);
  ctx.runtime.metrics.toolErrors.add(1, { tool: call.call.name });
  ctx.logger.warn({ toolCallId: call.call.id, tool: call.call.name }, Message.text(message));
  return { message, replayed: false, changes: {}, updates: [] };
}

/**
 * Call ids used more than once in one message (some gateways send `call_0` for every call). Such
 * calls are told apart by their position, or one would replay the other's result.
 */
function sharedCallIds(calls: readonly { id: string }[]): Set<string> {
  const seen = new Set<string>();
  const shared = new Set<string>();
  for (const { id } of calls) (seen.has(id) ? shared : seen).add(id);
  return shared;
}
