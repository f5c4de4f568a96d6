import type { ClaimLostError } from "../errors/errors.js";
import type { LedgerCall } from "./ledger-call.js";

/**
 * What a held claim does when a heartbeat finds it taken over while work acts on it (the tool,
 * or a reconcile): log it, and abort the work's signal with the {@link ClaimLostError}, so a
 * process that was paused past its lease stops acting instead of racing the execution that
 * took the call over.
 */
export function abortOnLost(
  call: LedgerCall,
  abort: (reason: unknown) => void,
): (error: ClaimLostError) => void {
  return (error) => {
    call.log.warn(
      { key: error.key, tool: call.tool.name, attempt: error.attempt },
      "Tool call's claim was taken over by another execution (its lease expired): its signal " +
        "is aborted and nothing this attempt does is recorded",
    );
    abort(error);
  };
}
