import type { Meter, Tracer } from "@opentelemetry/api";
import {
  interrupt,
  tool,
  type BaseState,
  type CompiledGraph,
  type InDoubtPolicy,
  type Logger,
  type ToolContext,
} from "@tenxgraph/core";
import { type Checkpointer } from "@tenxgraph/core/storage";
import { supportAgent, type FaultInjector, type ScriptedTurn } from "@tenxgraph/core/testing";
import { z } from "zod";
import type { AgentParams, ToolName } from "./agent-params.js";
import { appendEffect, readEffects } from "./side-effect-log.js";
import { ADDED_IN_V2, toolNameIn, versionOptions } from "./graph-versions.js";

/** A live claim counts as abandoned after 300 ms without a heartbeat, so resumes do not wait long. */
const STOP_POLL_INTERVAL_MS = 100;
/** See {@link STOP_POLL_INTERVAL_MS}; at least twice it, as `compile()` requires. */
const CLAIM_STALE_AFTER_MS = 300;

/** What the worker plugs into the agent: where faults fire, where logs and metrics go. */
export interface AgentHooks {
  checkpointer: Checkpointer;
  faultPoints: FaultInjector;
  logger: Logger;
  /** Where the runtime's counters go (default: the global meter, a no-op without an SDK). */
  meter?: Meter | undefined;
  /** Where the runtime's spans go (default: the global tracer, a no-op without an SDK). */
  tracer?: Tracer | undefined;
  /** Called when a tool starts hanging (it never returns in this process). */
  onHang(tool: ToolName): void;
}

/** The answer charge_card expects when it asks for approval. */
export interface Approval {
  approved: boolean;
}

const order = z.object({ order_id: z.string() });
const never = new Promise<never>(() => {});

/**
 * The seed's support agent (lookup_order, charge_card with a domain idempotency key,
 * send_receipt) on the worker's store, driven by a scripted model.
 */
export function buildSupportAgent(
  params: AgentParams,
  hooks: AgentHooks,
): CompiledGraph<BaseState> {
  return supportAgent<BaseState>({
    model: script(params),
    tools: crashTools(params, hooks),
    ...crashCompileOptions(params, hooks),
    ...versionOptions(params.graphVersion),
    // Version 2's new step: it changes nothing, but a thread can stand at it.
    ...(params.graphVersion === 2 ? { afterTools: { name: ADDED_IN_V2, node: () => ({}) } } : {}),
  });
}

/**
 * What every graph of the crash suite compiles with: the worker's store, fault points, logs and
 * metrics, and short claim leases so resumes do not wait long.
 */
export function crashCompileOptions(params: AgentParams, hooks: AgentHooks) {
  return {
    checkpointer: hooks.checkpointer,
    faultPoints: hooks.faultPoints,
    logger: hooks.logger,
    ...(hooks.meter ? { meter: hooks.meter } : {}),
    ...(hooks.tracer ? { tracing: { tracer: hooks.tracer, name: "support" } } : {}),
    stopPollIntervalMs: STOP_POLL_INTERVAL_MS,
    claimStaleAfterMs: params.claimStaleAfterMs ?? CLAIM_STALE_AFTER_MS,
  };
}

/**
 * The support agent's three tools as the crash suite runs them. Every tool appends its effect
 * to the external log before it returns, so the log shows what reached the outside world even
 * when the process dies the next instant.
 */
export function crashTools(params: AgentParams, hooks: AgentHooks) {
  const effect = (name: ToolName, orderId: string, ctx: ToolContext) =>
    appendEffect(params.effectsPath, {
      tool: name,
      key: ctx.idempotencyKey,
      // charge_card's domain key is its ledger key scoped by the tool; the others are keyed by call.
      ledgerKey: name === "charge_card" ? `${name}:${ctx.idempotencyKey}` : ctx.idempotencyKey,
      attempt: ctx.attempt,
      order: orderId,
      pid: process.pid,
    });
  // The three tools answer at different times (lookup at once, then the card, then the
  // mailer), each gap long next to a turn of the event loop even on a loaded machine. So, as in
  // most real nodes, a call that returns while a slower sibling runs is recorded on its own
  // (the window after a record stays reachable), and the slowest, returning last, rides in the
  // tool step's write (ledger protocol v2). See `RETURN_ORDER` in random-plan.ts.
  const CHARGE_DELAY_MS = 50;
  const RECEIPT_DELAY_MS = 100;
  const hangIfAsked = async (name: ToolName) => {
    if (params.hang !== name) return;
    hooks.onHang(name);
    await never; // the mailer never answers: only SIGKILL ends this call
  };
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Find an order.",
    schema: order,
    onInDoubt: policyOf("lookup_order", params),
    // Synchronous, as in the seed (its effect lands in the same tick as it starts), unless asked to hang.
    execute: (args, ctx) => {
      if (params.hang === "lookup_order") return hangIfAsked("lookup_order");
      effect("lookup_order", args.order_id, ctx);
      return `Order ${args.order_id}: 42.00 USD, shipped`;
    },
  });
  const chargeCard = tool({
    // Renamed by version 2; its effects and its hang still say charge_card (graph-versions.ts).
    name: toolNameIn("charge_card", params.graphVersion),
    description: "Charge the customer's saved card for an order.",
    schema: order.extend({ amount_cents: z.number().int() }),
    idempotencyKey: (args) => `order-${args.order_id}-charge`,
    onInDoubt: policyOf("charge_card", params),
    async execute(args, ctx) {
      if (params.approval) {
        // Side effects go after interrupt(): the code before it runs again on resume.
        const answer = interrupt<Approval>(args, { message: `Charge order ${args.order_id}?` });
        if (!answer.approved) return "Charge declined";
      }
      await hangIfAsked("charge_card");
      await new Promise((resolve) => setTimeout(resolve, CHARGE_DELAY_MS));
      effect("charge_card", args.order_id, ctx);
      return `Charged ${args.amount_cents / 100} USD for order ${args.order_id}`;
    },
  });
  const sendReceipt = tool({
    name: "send_receipt",
    description: "Email the receipt.",
    schema: order,
    onInDoubt: policyOf("send_receipt", params),
    async execute(args, ctx) {
      await hangIfAsked("send_receipt");
      await new Promise((resolve) => setTimeout(resolve, RECEIPT_DELAY_MS));
      effect("send_receipt", args.order_id, ctx);
      return `Receipt sent for order ${args.order_id}`;
    },
  });
  return [lookupOrder, chargeCard, sendReceipt];
}

/** The model's replies: one assistant message of parallel calls per round, then the answer. */
function script(params: AgentParams): ScriptedTurn[] {
  const named = (calls: AgentParams["rounds"][number]) =>
    calls.map((call) => ({ ...call, name: toolNameIn(call.name, params.graphVersion) }));
  return [...params.rounds.map((calls) => ({ toolCalls: named(calls) })), params.answer];
}

/** The text a reconciled call is recorded with, so tests can tell it from a tool's own result. */
export function reconciledText(name: ToolName, attempt: number): string {
  return `reconciled: ${name} had taken effect (attempt ${attempt})`;
}

function policyOf(name: ToolName, params: AgentParams): InDoubtPolicy<{ order_id: string }> {
  const policy = params.policies?.[name] ?? "retry";
  if (policy !== "reconcile") return policy;
  return {
    // Ask the outside world (the effect log) instead of acting again; undefined: it did not happen.
    reconcile: (_args, ctx) => {
      const done = readEffects(params.effectsPath).find(
        (e) => e.tool === name && e.key === ctx.idempotencyKey,
      );
      return done ? reconciledText(name, done.attempt) : undefined;
    },
  };
}
