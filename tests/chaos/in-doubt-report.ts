import { Message, decodeEnvelope } from "@tenxgraph/core";
import type { CrashScene, StoredThread } from "../crash/support/crash-scene.js";

/** Where a run surfaced an in-doubt call: the runtime's IN DOUBT warning, as the worker relayed it. */
interface Surfaced {
  key: string;
  attempt: number;
}

/** Every in-doubt call the scene's runs surfaced (a call's attempt counted once). */
export function surfacedInDoubt(scene: CrashScene): Surfaced[] {
  const seen = new Map<string, Surfaced>();
  for (const message of scene.runs.flatMap((run) => run.messages)) {
    if (message.type !== "log" || message.level !== "warn") continue;
    if (!String(message.msg).includes("IN DOUBT")) continue;
    const call = { key: String(message.key), attempt: Number(message.attempt) };
    seen.set(`${call.key}#${call.attempt}`, call);
  }
  return [...seen.values()];
}

/**
 * In-doubt calls nobody was told about. A call that took effect at two attempts was in doubt
 * in between (its first attempt acted and was never recorded), and one that was settled without
 * running (`"fail"`'s TOOL_IN_DOUBT_001, a `reconcile` answer) was in doubt too: each must have
 * an IN DOUBT warning for its key, at an attempt in that span. Returns them, described.
 */
export function unsurfacedInDoubt(scene: CrashScene, stored: StoredThread): string[] {
  const surfaced = surfacedInDoubt(scene);
  const warned = (key: string, from: number, to: number) =>
    surfaced.some((s) => s.key === key && s.attempt >= from && s.attempt < to);
  const missing: string[] = [];
  // By ledger key, as the warnings name calls (a domain key is scoped by its tool there).
  for (const key of new Set(stored.effects.map((e) => e.ledgerKey))) {
    const attempts = [
      ...new Set(stored.effects.filter((e) => e.ledgerKey === key).map((e) => e.attempt)),
    ];
    attempts.sort((a, b) => a - b);
    attempts.slice(1).forEach((attempt, i) => {
      const before = attempts[i]!;
      if (!warned(key, before, attempt)) {
        missing.push(`${key} acted at attempts ${before} and ${attempt} with no IN DOUBT warning`);
      }
    });
  }
  for (const entry of stored.ledger) {
    if (entry.status !== "completed") continue;
    const decoded = decodeEnvelope(entry.result, "any");
    const settledInDoubt =
      decoded?.errorCode === "TOOL_IN_DOUBT_001" ||
      (decoded !== null && Message.text(decoded.message).startsWith("reconciled:"));
    if (settledInDoubt && !warned(entry.key, 0, Infinity)) {
      missing.push(`${entry.key} was settled in doubt with no IN DOUBT warning`);
    }
  }
  return missing;
}
