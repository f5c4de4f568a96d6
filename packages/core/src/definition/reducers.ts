import { isDeepStrictEqual } from "node:util";
import {
  Message,
  REMOVE_ALL_MESSAGES,
  type MessageRemoval,
  type MessageUpdate,
} from "../messages/message.js";

/** The state every graph has: the transcript, plus fields of the graph's own. */
export interface BaseState {
  messages: Message[];
}

/** Combines a field's current value with an update to it. */
export type Reducer<T> = (current: T, update: T) => T;

/** Reducers for a state's fields; a field without one is replaced by its update. */
export type Reducers<S> = { [K in Exclude<keyof S, "messages">]?: Reducer<S[K]> };

/**
 * A node's update: fields replaced or reduced, and `messages` merged into the transcript: a
 * message with a new id is appended, one with the id of a message already there replaces it in
 * its place (an edit), and `Message.remove(id)` / `Message.removeAll()` remove.
 */
export type StateUpdate<S extends BaseState> = Partial<Omit<S, "messages">> & {
  messages?: MessageUpdate[];
};

/**
 * The transcript with `update` merged in (see {@link StateUpdate}); a copy unless nothing
 * changes. Re-sending a message unchanged (as a parallel branch or a replay does) is no edit and
 * never duplicates it. `knownIds`, when given, must be the ids of `current`; it spares hashing
 * the whole transcript per step.
 */
export function appendMessages(
  current: Message[],
  update: readonly MessageUpdate[],
  knownIds?: ReadonlySet<string>,
): Message[] {
  if (update.length === 0) return current;
  const merged = current.slice();
  mergeMessages(merged, update, knownIds ?? new Set(current.map((message) => message.id)));
  return merged;
}

/** Merges `update` into `transcript` in place. */
function mergeMessages(
  transcript: Message[],
  update: readonly MessageUpdate[],
  knownIds: ReadonlySet<string>,
): void {
  let known = knownIds;
  const added = new Set<string>();
  for (const item of update) {
    if (Message.isRemoval(item)) {
      removeMessage(transcript, item);
      // Rare: the ids are hashed again rather than kept in step with every removal.
      known = new Set(transcript.map((message) => message.id));
      added.clear();
      continue;
    }
    if (known.has(item.id) || added.has(item.id)) {
      replaceMessage(transcript, item);
      continue;
    }
    added.add(item.id);
    transcript.push(item);
  }
}

/** The message of the same id gives way to `message`, in its place, unless they are equal. */
function replaceMessage(transcript: Message[], message: Message): void {
  const index = transcript.findLastIndex((held) => held.id === message.id);
  const held = transcript[index];
  if (held === undefined || held === message || isDeepStrictEqual(held, message)) return;
  transcript[index] = message;
}

function removeMessage(transcript: Message[], removal: MessageRemoval): void {
  if (removal.id === REMOVE_ALL_MESSAGES) {
    transcript.length = 0;
    return;
  }
  const index = transcript.findIndex((message) => message.id === removal.id);
  if (index === -1) {
    throw new TypeError(
      `Message.remove('${removal.id}'): the transcript has no message with this id`,
    );
  }
  transcript.splice(index, 1);
}

/** What the caller of {@link applyUpdate} knows of the state's transcript. */
export interface TranscriptFacts {
  /** The ids of `state.messages`: spares hashing the whole transcript. */
  knownIds?: ReadonlySet<string>;
  /**
   * Nobody else holds `state.messages` (a step's working copy), so it may grow in place
   * instead of being copied again: on a long thread that copy was a large part of a step.
   */
  owned?: boolean;
}

/** Applies `update` to `state` in place: messages merged, other fields replaced or reduced. */
export function applyUpdate<S extends BaseState>(
  state: S,
  update: StateUpdate<S>,
  reducers: Reducers<S>,
  transcript: TranscriptFacts = {},
): void {
  for (const field of Object.keys(update) as (keyof S & string)[]) {
    const value = (update as Partial<S>)[field];
    if (field === "messages") {
      if (!Array.isArray(value)) {
        throw new TypeError(
          `An update's messages must be an array of messages, got ${typeof value}`,
        );
      }
      const messages = value as MessageUpdate[];
      if (transcript.owned) {
        const knownIds = transcript.knownIds ?? new Set(state.messages.map((m) => m.id));
        mergeMessages(state.messages, messages, knownIds);
      } else {
        state.messages = appendMessages(state.messages, messages, transcript.knownIds);
      }
      continue;
    }
    const reducer = reducers[field as Exclude<keyof S, "messages">] as Reducer<unknown> | undefined;
    state[field] = (reducer ? reducer(state[field], value) : value) as S[typeof field];
  }
}
