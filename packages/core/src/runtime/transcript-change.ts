import { isDeepStrictEqual } from "node:util";
import type { Message } from "../messages/message.js";

/** How a transcript differs from the one the store holds, as a checkpoint write carries it. */
export interface TranscriptChange {
  newMessages: Message[];
  replacedMessages: Message[];
  removedMessageIds: string[];
}

/**
 * What `current` changed of `durable` (the transcript the store holds): messages appended,
 * replaced in place (same id, other content) and removed, which is all a state update can do.
 * The usual step only appends, which is found by comparing references, without hashing ids.
 */
export function diffTranscript(
  durable: readonly Message[],
  current: readonly Message[],
): TranscriptChange {
  if (keepsPrefix(durable, current)) {
    return {
      newMessages: current.slice(durable.length),
      replacedMessages: [],
      removedMessageIds: [],
    };
  }
  const currentById = new Map(current.map((message) => [message.id, message]));
  const durableIds = new Set(durable.map((message) => message.id));
  const change: TranscriptChange = {
    removedMessageIds: durable.filter((m) => !currentById.has(m.id)).map((m) => m.id),
    replacedMessages: durable.flatMap((held) => {
      const now = currentById.get(held.id);
      return now && now !== held && !isDeepStrictEqual(now, held) ? [now] : [];
    }),
    newMessages: current.filter((message) => !durableIds.has(message.id)),
  };
  requireSameOrder(applyTranscriptChange(durable, change), current);
  return change;
}

/**
 * Whether `after` starts with the very messages of `before` (by reference): the transcript was
 * only appended to. A plain loop, not `every` with a closure: it runs over the whole transcript
 * several times per step.
 */
export function keepsPrefix(before: readonly Message[], after: readonly Message[]): boolean {
  if (after.length < before.length) return false;
  for (let i = 0; i < before.length; i++) if (after[i] !== before[i]) return false;
  return true;
}

/** `base` with `change` applied, as a store applies it: removals, replacements in place, appends. */
export function applyTranscriptChange(
  base: readonly Message[],
  change: TranscriptChange,
): Message[] {
  if (change.removedMessageIds.length === 0 && change.replacedMessages.length === 0) {
    return [...base, ...change.newMessages];
  }
  const removed = new Set(change.removedMessageIds);
  const replaced = new Map(change.replacedMessages.map((message) => [message.id, message]));
  return [
    ...base.filter((message) => !removed.has(message.id)).map((m) => replaced.get(m.id) ?? m),
    ...change.newMessages,
  ];
}

/**
 * A store keeps a transcript's kept messages in their order and appends new ones after them:
 * a transcript whose messages were reordered cannot be written, and would be wrong if it were.
 */
function requireSameOrder(stored: readonly Message[], current: readonly Message[]): void {
  const same = stored.length === current.length && stored.every((m, i) => m.id === current[i]!.id);
  if (!same) {
    throw new TypeError(
      "The transcript's messages were reordered: a state update can append, replace (same id) " +
        "and remove messages (Message.remove), but not move them",
    );
  }
}
