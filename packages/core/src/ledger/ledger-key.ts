import { inNamespace } from "../node/node-context.js";

/**
 * The identity of one tool call in the ledger: the assistant message that issued it plus the
 * call id inside that message, inside the branch that runs it. Providers reuse call ids like
 * `call_1` on every turn; the message id makes two turns never collide, and the namespace two
 * branches of one step that run the same message's calls (see {@link inNamespace}). `null`
 * when either id is missing: the ledger is then skipped for the call, because a wrong key could
 * skip a call that never ran.
 */
export function ledgerKey(
  messageId: string | undefined,
  toolCallId: string | undefined,
  namespace = "",
): string | null {
  if (!messageId || !toolCallId) return null;
  return inNamespace(namespace, `${messageId}:${toolCallId}`);
}

/**
 * The ledger key of a call whose tool declares a domain key: the domain key scoped by the tool's
 * name, so two tools that declare the same domain key (`charge_card` and `refund_payment` both
 * saying `order-4821`) are two facts with two entries, never one answering the other. Tool names
 * hold no `:`, so the tool part always ends at the first one.
 */
export function domainLedgerKey(toolName: string, domainKey: string): string {
  return `${toolName}:${domainKey}`;
}
