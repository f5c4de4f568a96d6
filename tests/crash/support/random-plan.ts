import { IN_DOUBT_INTERRUPT_KIND, type Interrupt } from "@tenxgraph/core";
import { type FaultPointName } from "@tenxgraph/core/testing";
import type {
  AgentParams,
  PlannedCall,
  PolicyName,
  RunInputPlan,
  ToolName,
} from "./agent-params.js";
import type { StoredThread } from "./crash-scene.js";
import { between, pick, type Rng } from "./prng.js";

/**
 * How a process of the loop may die: at a named fault point, hung in a tool and killed, or
 * killed from outside at a random moment of its run ("anytime", maybe inside a store write).
 */
export type KillKind = FaultPointName | "hang" | "anytime";

/** Every way to die, each tried in turn by the loop so all of them are covered. */
export const KILL_KINDS: readonly KillKind[] = [
  "tool.after_return",
  "ledger.after_record",
  "step.before_write",
  "step.after_write",
  "hang",
  "anytime",
];
/** A run takes a few tens of milliseconds after its first write: kills land all over it. */
const ANYTIME_MAX_MS = 40;

/** The support agent's tools in the order they return when started together (support-agent.ts). */
const RETURN_ORDER: readonly ToolName[] = ["lookup_order", "charge_card", "send_receipt"];

/** The support agent's tools. */
export const TOOL_NAMES: readonly ToolName[] = ["lookup_order", "charge_card", "send_receipt"];
/** "retry" three times as often: it is the default, and the one that runs a call again. */
const POLICIES: readonly PolicyName[] = [
  "retry",
  "retry",
  "retry",
  "fail",
  "reconcile",
  "interrupt",
];

/** One scenario of the loop: a user turn of one or two rounds of parallel calls. */
export interface ScenarioPlan {
  threadId: string;
  rounds: PlannedCall[][];
  answer: string;
  policies: Partial<Record<ToolName, PolicyName>>;
  approval: boolean;
}

/** A random scenario; every call names its own order, so no two calls share a ledger key. */
export function planScenario(rng: Rng, seed: number): ScenarioPlan {
  const rounds = Array.from({ length: between(rng, 1, 2) }, (_, r) =>
    Array.from({ length: between(rng, 1, 3) }, (_, c): PlannedCall => {
      const name = pick(rng, TOOL_NAMES);
      const order_id = `${seed}-${r}-${c}`;
      return name === "charge_card"
        ? { name, args: { order_id, amount_cents: between(rng, 100, 9999) } }
        : { name, args: { order_id } };
    }),
  );
  const policies = Object.fromEntries(TOOL_NAMES.map((name) => [name, pick(rng, POLICIES)]));
  return {
    threadId: `crash-loop-${seed}`,
    rounds,
    answer: `seed ${seed}: all done`,
    policies,
    approval: rng() < 0.2,
  };
}

/**
 * A kill of `kind`, aimed where it will likely fire: at a call not recorded yet (a recorded one
 * is replayed and never reaches a tool point), or at one of the next few writes.
 */
export function randomKill(
  rng: Rng,
  plan: ScenarioPlan,
  stored: StoredThread | null,
  kind: KillKind,
): Pick<AgentParams, "kill" | "hang" | "outsideKillMs"> {
  if (kind === "anytime") return { outsideKillMs: between(rng, 0, ANYTIME_MAX_MS) };
  if (kind === "step.before_write" || kind === "step.after_write") {
    return { kill: { point: kind, hit: between(rng, 1, 3) } };
  }
  const recorded = new Set(
    stored?.ledger.filter((e) => e.status === "completed").map((e) => e.toolName),
  );
  const calls = plan.rounds.flat().map((c) => c.name);
  const open = calls.filter((name) => !recorded.has(name));
  // A call is recorded on its own (ledger.after_record) only while a slower sibling still runs;
  // otherwise it rides in the step's write (ledger protocol v2).
  const recordedAlone = plan.rounds
    .flatMap((round) => {
      const slowest = Math.max(...round.map((c) => RETURN_ORDER.indexOf(c.name)));
      return round.filter((c) => RETURN_ORDER.indexOf(c.name) < slowest).map((c) => c.name);
    })
    .filter((name) => !recorded.has(name));
  const aimed = kind === "ledger.after_record" && recordedAlone.length > 0 ? recordedAlone : open;
  const tool = pick(rng, aimed.length > 0 ? aimed : calls);
  if (kind === "hang") return { hang: tool };
  return { kill: { point: kind, tool, hit: 1 } };
}

/** How often a client facing several pending interrupts answers them all in one resume. */
const ANSWER_ALL_AT_ONCE = 0.3;

/**
 * What the client does next, from the stored thread: send the turn (again, if a crash lost it
 * before the first write), answer one pending interrupt (or all of them at once), or continue
 * the unfinished run.
 */
export function nextInput(rng: Rng, stored: StoredThread | null, text: string): RunInputPlan {
  const checkpoint = stored?.checkpoint;
  if (!checkpoint) return { kind: "new", text };
  if (checkpoint.status !== "interrupted") return { kind: "continue" };
  const { interrupts } = checkpoint;
  if (interrupts.length > 1 && rng() < ANSWER_ALL_AT_ONCE) {
    // A map of answers by interrupt id answers every pending interrupt in one resume.
    const answers = Object.fromEntries(interrupts.map((p) => [p.id, answerTo(rng, p)]));
    return { kind: "resume", answer: answers };
  }
  const pending = pick(rng, interrupts);
  return { kind: "resume", answer: answerTo(rng, pending), interruptId: pending.id };
}

function answerTo(rng: Rng, pending: Interrupt): unknown {
  const value = pending.value as { kind?: string; tool?: string };
  if (value.kind !== IN_DOUBT_INTERRUPT_KIND) return { approved: rng() < 0.8 };
  const action = pick(rng, ["retry", "complete", "fail"] as const);
  if (action === "complete") return { action, result: `human: ${value.tool} checked by hand` };
  return { action };
}
