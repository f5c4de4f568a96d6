/**
 * The identity of one tool call in the ledger: the assistant message that issued it plus the
 * call id inside that message. Providers reuse call ids like `call_1` on every turn; the
 * message id makes two turns never collide. `null` when either part is missing: the ledger
 * is then skipped for the call, because a wrong key could skip a call that never ran.
 */
export function ledgerKey(
  messageId: string | undefined,
  toolCallId: string | undefined,
): string | null {
  if (!messageId || !toolCallId) return null;
  return `${messageId}:${toolCallId}`;
}
