import type { Logger } from "../events/logger.js";

/**
 * What the ledger protocol knows of one tool call: enough to key, claim, replay and record it,
 * and to follow its tool's in-doubt policy. `ToolNode` prepares it (`LedgerCall` in
 * tools/prepared-call.ts is one); the ledger never sees the tool's code, only this.
 */
export interface LedgerCall {
  /** The model's call; its id is the `toolCallId` of the message that answers it. */
  readonly call: { readonly id: string };
  readonly tool: LedgerTool;
  /**
   * The tool name its entry is recorded under: the name the call was made under, a former name
   * for a call made before a migration renamed its tool (so a worker of the former version,
   * during a rolling deploy, still finds the entry its own), else `tool.name`.
   */
  readonly recordedToolName: string;
  /** The checked arguments: shown to a human when the call is in doubt, passed to `reconcile`. */
  readonly args: unknown;
  /** `<message id>:<call id>`: names the call in recorded results (`null` when a part is missing). */
  readonly origin: string | null;
  /**
   * The digest of the model's arguments (`argsDigest`), recorded with the result: the call's own
   * record replays only while it matches, so a call edited in place is not answered with the
   * result of the arguments it had before.
   */
  readonly argsDigest: string;
  /**
   * The ledger key, or `null` when the call cannot be keyed (it then runs without the ledger).
   * With a domain key it is that key scoped by the tool's name; a call may switch to
   * a former key before its claim (see `adoptFormerKeys`).
   */
  key: string | null;
  /**
   * The bare domain key, under which versions before keys were scoped by tool recorded the fact;
   * `null` for a tool without `idempotencyKey`.
   */
  readonly unscopedKey: string | null;
  /** Bound to the call's thread, run, node and tool call. */
  readonly log: Logger;
}

/** What the ledger knows of the tool behind a call. */
export interface LedgerTool {
  readonly name: string;
  /** Seconds the tool may run (see `toolTimeoutMs`); `undefined` takes the run's `toolTimeout`. */
  readonly timeout: number | null | undefined;
  /**
   * The tool's `onInDoubt` policy. A `reconcile` gets the context the tool layer builds for the
   * attempt (a `ToolContext`), which the ledger passes along without reading it.
   */
  readonly onInDoubt:
    "retry" | "fail" | "interrupt" | { reconcile(args: unknown, ctx: unknown): unknown };
}
