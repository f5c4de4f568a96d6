import type { FaultPointName } from "@tenxgraph/core/testing";
import type { StoreSpec } from "../../support/store-spec.js";

/** The support agent's tools. */
export type ToolName = "lookup_order" | "charge_card" | "send_receipt";

/** What a tool does when its call is found in doubt (`onInDoubt`); `reconcile` reads the effect log. */
export type PolicyName = "retry" | "fail" | "interrupt" | "reconcile";

/** One tool call the scripted model asks for. */
export interface PlannedCall {
  name: ToolName;
  args: { order_id: string; amount_cents?: number };
}

/**
 * Where the worker SIGKILLs itself: at the `hit`-th time (default 1) the run reaches `point`,
 * counting only hits for `tool` when given.
 */
export interface KillPlan {
  point: FaultPointName;
  tool?: ToolName;
  hit?: number;
}

/** A SIGSTOP from outside, then a SIGKILL or a SIGCONT. */
export interface FreezePlan {
  afterMs: number;
  forMs: number;
  then: "kill" | "continue";
}

/**
 * The team the composition crash loop runs instead of the support agent: a supervisor that
 * fans out with `Send` to two subgraph workers, each a model and a tool node on a child thread.
 */
export interface TeamPlan {
  /** One Send to the billing worker per order: it looks the order up and charges it, in parallel. */
  billing: { order_id: string; amount_cents: number }[];
  /** One Send to the mailer worker with these orders: one send_receipt per order, in parallel. */
  mail: string[];
}

/** How the worker starts its run. */
export type RunInputPlan =
  | { kind: "new"; text: string }
  | { kind: "continue" }
  | { kind: "resume"; answer: unknown; interruptId?: string };

/** Everything one worker process needs, passed as JSON by the parent. */
export interface AgentParams {
  /** The store shared by every process of a test: a SQLite file or a PostgreSQL schema. */
  store: StoreSpec;
  /** The external append-only log of side effects (one JSON line per effect). */
  effectsPath: string;
  threadId: string;
  via: "invoke" | "stream";
  input: RunInputPlan;
  /** The model's replies: each round is one assistant message of parallel calls, then `answer`. */
  rounds: PlannedCall[][];
  answer: string;
  /** Run the team (team-agent.ts) instead of the support agent; `rounds` and `answer` are unused. */
  team?: TeamPlan;
  kill?: KillPlan;
  /**
   * Where the worker stops and waits for the parent's SIGKILL: at the `hit`-th time (default 1)
   * the run reaches `point`, it reports `paused` and goes no further. For a kill at a moment no
   * store call waits on (a write the store hands Redis without waiting for it).
   */
  pause?: { point: FaultPointName; hit?: number };
  /** This tool never returns in this process (before its side effect): the parent kills it. */
  hang?: ToolName;
  /** `onInDoubt` per tool (default `"retry"`). */
  policies?: Partial<Record<ToolName, PolicyName>>;
  /** charge_card asks a human (`interrupt()`) before charging. */
  approval?: boolean;
  /**
   * Read by the parent only: it SIGKILLs the worker this many ms after its first committed
   * write, at whatever the worker is doing then (possibly in the middle of a store write).
   */
  outsideKillMs?: number;
  /**
   * Read by the parent only: it SIGSTOPs the worker `afterMs` after its first committed write,
   * and `forMs` later SIGKILLs it or lets it go on (SIGCONT).
   */
  freeze?: FreezePlan;
  /** How old a claim's heartbeat must be to count as left by a dead worker (default 300 ms). */
  claimStaleAfterMs?: number;
  /**
   * The support agent's version this worker runs (graph-versions.ts): 2 renames charge_card and
   * adds a node, with a migration from 1. Absent: the graph is compiled without a version.
   */
  graphVersion?: 1 | 2;
  /** Report the runtime's OpenTelemetry counters in `done` (default true). */
  metrics?: boolean;
  /** Stay alive after the run ended, until the parent kills the process. */
  stayAlive?: boolean;
}

/** One line of the side-effect log: what reached the outside world, and from which attempt. */
export interface Effect {
  tool: ToolName;
  /** `ctx.idempotencyKey`: what the provider sees (the domain key for charge_card). */
  key: string;
  /** The call's ledger key: `key`, scoped by the tool's name for a domain key. */
  ledgerKey: string;
  attempt: number;
  order: string;
  pid: number;
}
