import { z } from "zod";
import { InvalidRunError } from "../errors/errors.js";

/*
 * The question a tool call in doubt asks a human (its tool's `onInDoubt: "interrupt"`, raised by
 * the ledger), and the answers a resume may give it. It lives with the run, not the ledger,
 * because the run checks an answer before storing it.
 */

/** `value.kind` of the interrupt an in-doubt call raises under the `"interrupt"` policy. */
export const IN_DOUBT_INTERRUPT_KIND = "tool_in_doubt";

/** The answer to an in-doubt interrupt. */
export const inDoubtDecisionSchema = z.discriminatedUnion("action", [
  /** Run the tool again. */
  z.object({ action: z.literal("retry") }),
  /** It did happen: record `result` as what the tool returned. */
  z.object({ action: z.literal("complete"), result: z.unknown() }),
  /** Tell the model the call failed. */
  z.object({ action: z.literal("fail"), reason: z.string().optional() }),
]);
/** A human's answer to an in-doubt interrupt. */
export type InDoubtDecision = z.infer<typeof inDoubtDecisionSchema>;

/** Checks an answer to an in-doubt interrupt before it is stored, so a typo cannot wedge the thread. */
export function parseInDoubtDecision(answer: unknown): InDoubtDecision {
  const parsed = inDoubtDecisionSchema.safeParse(answer);
  if (parsed.success) return parsed.data;
  throw new InvalidRunError(
    "RESUME_004",
    `The answer to an in-doubt tool call must be { action: "retry" }, ` +
      `{ action: "complete", result } or { action: "fail", reason? }; got ${JSON.stringify(answer)}`,
  );
}
