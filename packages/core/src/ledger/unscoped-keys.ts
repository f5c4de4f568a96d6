import type { InternalNodeContext as NodeContext } from "../node/node-context.js";
import type { LedgerCall } from "./ledger-call.js";

/**
 * Versions before domain keys were scoped by tool recorded a domain-keyed call under the bare
 * domain key. Such an entry still stands for its fact, but only for the tool that wrote it: a
 * call whose bare key holds an entry of its own tool keeps using that key (so a charge completed
 * before an upgrade is replayed, never run again), and an entry of another tool is left alone.
 * New entries are never made under a bare key, so a fact lives under one key for good.
 *
 * Costs one ledger read per node with domain-keyed calls. A failed read is logged and the calls
 * use their scoped keys, as a failed ledger read lets a call run (SPEC 4.3).
 */
export async function adoptUnscopedKeys(
  calls: readonly LedgerCall[],
  ctx: NodeContext,
): Promise<void> {
  const keyed = calls.filter((call) => call.key !== null && call.unscopedKey !== null);
  if (keyed.length === 0) return;
  const keys = [...new Set(keyed.map((call) => call.unscopedKey!))];
  let entries;
  try {
    entries = await ctx.runtime.checkpointer.getCalls(ctx.threadId, keys);
  } catch (error) {
    ctx.logger.error(
      { err: error, keys },
      "Tool ledger read of bare domain keys failed: entries recorded before domain keys were " +
        "scoped by tool are not consulted, and the calls use their scoped keys",
    );
    return;
  }
  const toolOf = new Map(entries.map((entry) => [entry.key, entry.toolName]));
  for (const call of keyed) {
    const recordedBy = toolOf.get(call.unscopedKey!);
    if (recordedBy !== call.tool.name) continue;
    call.log.info(
      { key: call.unscopedKey, scopedKey: call.key, tool: call.tool.name },
      "Tool call's fact was recorded before domain keys were scoped by tool: it keeps its bare key",
    );
    call.key = call.unscopedKey;
  }
}
