import type { Message } from "../messages/message.js";

/** The state every graph has: the transcript, plus fields of the graph's own. */
export interface BaseState {
  messages: Message[];
}

/** Combines a field's current value with an update to it. */
export type Reducer<T> = (current: T, update: T) => T;

/** Reducers for a state's fields; a field without one is replaced by its update. */
export type Reducers<S> = { [K in Exclude<keyof S, "messages">]?: Reducer<S[K]> };

/** A node's update: messages are appended, other fields replaced or reduced. */
export type StateUpdate<S extends BaseState> = Partial<S>;

/**
 * Appends the messages whose id is not in the transcript yet. The transcript is append-only:
 * re-sending a message (as a parallel branch or a replay does) never duplicates it. `knownIds`,
 * when given, must be the ids of `current`; it spares hashing the whole transcript per step.
 */
export function appendMessages(
  current: Message[],
  update: readonly Message[],
  knownIds?: ReadonlySet<string>,
): Message[] {
  if (update.length === 0) return current;
  const appended = current.slice();
  appendNew(appended, update, knownIds ?? new Set(current.map((message) => message.id)));
  return appended;
}

/** Pushes onto `transcript` the messages of `update` whose id is neither known nor pushed. */
function appendNew(
  transcript: Message[],
  update: readonly Message[],
  knownIds: ReadonlySet<string>,
): void {
  const added = new Set<string>();
  for (const message of update) {
    if (knownIds.has(message.id) || added.has(message.id)) continue;
    added.add(message.id);
    transcript.push(message);
  }
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

/** Applies `update` to `state` in place: messages appended, other fields replaced or reduced. */
export function applyUpdate<S extends BaseState>(
  state: S,
  update: StateUpdate<S>,
  reducers: Reducers<S>,
  transcript: TranscriptFacts = {},
): void {
  for (const field of Object.keys(update) as (keyof S & string)[]) {
    const value = update[field];
    if (field === "messages") {
      if (!Array.isArray(value)) {
        throw new TypeError(
          `An update's messages must be an array of messages, got ${typeof value}`,
        );
      }
      const messages = value as Message[];
      if (transcript.owned) {
        const knownIds = transcript.knownIds ?? new Set(state.messages.map((m) => m.id));
        appendNew(state.messages, messages, knownIds);
      } else {
        state.messages = appendMessages(state.messages, messages, transcript.knownIds);
      }
      continue;
    }
    const reducer = reducers[field as Exclude<keyof S, "messages">] as Reducer<unknown> | undefined;
    state[field] = (reducer ? reducer(state[field], value) : value) as S[typeof field];
  }
}
