import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import type { LedgerCall } from "./ledger-call.js";
import { domainLedgerKey } from "./ledger-key.js";

/**
 * A domain-keyed call's fact may have been recorded under a key it no longer makes:
 * - versions before domain keys were scoped by tool recorded it under the bare domain key;
 * - a tool renamed by a migration (`compile({ migrations })`) recorded it scoped by its
 *   former name.
 * Such an entry still stands for its fact, but only for the tool that wrote it (or the tool
 * that replaces it): a call whose former key holds such an entry keeps using that key (so a
 * charge completed before an upgrade is replayed, never run again), and an entry of another
 * tool is left alone. A call made under a former name is keyed by that name from the start
 * (prepared-call.ts), so both versions of a rolling deploy claim one entry for it; it looks
 * for its fact under the current name too. A fact lives under one key for good.
 *
 * Costs one ledger read per node with domain-keyed calls. A failed read is logged and the calls
 * use their scoped keys, as a failed ledger read lets a call run (SPEC 4.3).
 */
export async function adoptFormerKeys(
  calls: readonly LedgerCall[],
  ctx: NodeContext,
): Promise<void> {
  const keyed = calls.filter((call) => call.key !== null && call.unscopedKey !== null);
  if (keyed.length === 0) return;
  const candidates = new Map(keyed.map((call) => [call, formerKeys(call, ctx)]));
  const keys = [...new Set([...candidates.values()].flat())];
  let entries;
  try {
    entries = await ctx.runtime.checkpointer.getCalls(ctx.threadId, keys);
  } catch (error) {
    ctx.logger.error(
      { err: error, keys },
      "Tool ledger read of former keys failed: entries recorded under a bare domain key or a " +
        "renamed tool's name are not consulted, and the calls use their scoped keys",
    );
    return;
  }
  const toolOf = new Map(entries.map((entry) => [entry.key, entry.toolName]));
  for (const call of keyed) {
    const adopted = candidates.get(call)!.find((key) => {
      const recordedBy = toolOf.get(key);
      return recordedBy !== undefined && isOwnTool(recordedBy, call, ctx);
    });
    if (adopted === undefined) continue;
    call.log.info(
      { key: adopted, scopedKey: call.key, tool: call.tool.name, recordedBy: toolOf.get(adopted) },
      "Tool call's fact was recorded under a former key (a bare domain key, or the tool's " +
        "former name): it keeps that key",
    );
    call.key = adopted;
  }
}

/** True when `toolName` recorded an entry that is `call`'s tool's own: its name or a former one. */
export function isOwnTool(toolName: string, call: LedgerCall, ctx: NodeContext): boolean {
  return toolName === call.tool.name || ctx.runtime.toolRenames.get(toolName) === call.tool.name;
}

/**
 * The keys a call's fact may be recorded under besides its own, most recent first: its tool's
 * current name (for a call made under a former name, which keeps that name's key), the tool's
 * former names, the bare domain key.
 */
function formerKeys(call: LedgerCall, ctx: NodeContext): string[] {
  const domainKey = call.unscopedKey!;
  const renamedFrom = [...ctx.runtime.toolRenames]
    .filter(([, current]) => current === call.tool.name)
    .map(([former]) => domainLedgerKey(former, domainKey));
  const keys = [domainLedgerKey(call.tool.name, domainKey), ...renamedFrom, domainKey];
  return keys.filter((key) => key !== call.key);
}
