import type { Message } from "@tenxgraph/core";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";

/**
 * Who may make a state edit that decides what runs next: one that adds an assistant message
 * with tool calls or a tool result, or that sets `as_node`. Continuing the thread after such
 * an edit runs the tools with the caller's own arguments (a charge to any order, of any amount),
 * so it is off for end users.
 */
export interface StateEditPolicy {
  /** Everyone may (`privilegedStateEdits: true`, `PRIVILEGED_STATE_EDITS=true`); default false. */
  everyone: boolean;
  /** A user whose token carries this claim as `true` may (default `"admin"`; `null`: none). */
  adminClaim: string | null;
}

/** The policy from the app's options, else the environment. */
export function stateEditPolicy(options: {
  privilegedStateEdits?: boolean;
  adminClaim?: string | null;
}): StateEditPolicy {
  return {
    everyone: options.privilegedStateEdits ?? process.env.PRIVILEGED_STATE_EDITS === "true",
    adminClaim: options.adminClaim === undefined ? "admin" : options.adminClaim,
  };
}

/**
 * Refuses (403 `STATE_EDIT_FORBIDDEN`) an edit that adds tool calls or tool results, or sets
 * `as_node`, unless `policy` allows it for `user`. Called before anything is written.
 */
export function refusePrivilegedEdit(
  policy: StateEditPolicy,
  user: AuthUser,
  edit: { messages: readonly Message[]; asNode?: string | undefined },
): void {
  const what =
    edit.asNode !== undefined
      ? "sets as_node"
      : edit.messages.some((m) => m.role === "assistant" && (m.toolCalls?.length ?? 0) > 0)
        ? "adds tool calls"
        : edit.messages.some((m) => m.role === "tool")
          ? "adds tool results"
          : null;
  if (what === null || policy.everyone) return;
  if (policy.adminClaim !== null && user.claims[policy.adminClaim] === true) return;
  throw new ApiError(
    403,
    "STATE_EDIT_FORBIDDEN",
    `This state edit ${what}, which decides what the thread runs next: only allowed for users ` +
      `with the '${policy.adminClaim ?? "admin"}' claim or when the server enables ` +
      `privilegedStateEdits (PRIVILEGED_STATE_EDITS=true)`,
  );
}
