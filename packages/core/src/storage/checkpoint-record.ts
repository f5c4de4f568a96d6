/**
 * A pause waiting for an answer from outside the run (usually a human), kept with the thread
 * until it is answered. `interrupt()` raises it.
 */
export interface Interrupt {
  /** Derived from the tool call (or node and step) that paused; stable across replays. */
  id: string;
  /** What the node or tool asked, as given to `interrupt()`. Plain JSON. */
  value: unknown;
  message?: string;
  node: string;
  toolCallId?: string;
  /**
   * When a timer answers it (ISO 8601, UTC): set by `ctx.sleep(ms)` and by
   * `interrupt(value, { resumeAt })`. A host resumes the thread then, with the answer `null`,
   * unless someone answered it first.
   */
  resumeAt?: string;
}

/**
 * The next step of a thread whose graph fans out: the tasks it runs in parallel, and the joins
 * (`addEdge([a, b], c)`) still waiting for some of their sources.
 */
export interface Frontier {
  /** The nodes and `Send`s the next step runs, in the order their updates are merged. */
  tasks: FrontierTask[];
  /** For each join's target, the sources that have finished since it last ran. */
  joins: Record<string, string[]>;
}

/** One task of a step: a node, and for a `Send` the input it runs with. */
export interface FrontierTask {
  node: string;
  /** A `Send`'s input, laid over the node's copy of the state; absent for a node reached by an edge. */
  input?: unknown;
  /**
   * The namespace of the task's ledger keys, interrupt ids and child threads, when it is not
   * the one its node's name gives: set when a migration renamed the node, so the task keeps
   * the identity its calls were recorded under.
   */
  namespace?: string;
}

/**
 * The version of the graph that wrote a checkpoint: a digest of its shape, and the version its
 * author named (`compile({ version })`). A run under another graph checks, or migrates, the thread.
 */
export interface GraphVersion {
  /** `sha256:` and the digest of the graph's nodes, edges, tools and tools' argument schemas. */
  fingerprint: string;
  /** `compile({ version })`, when given. */
  version?: string;
}

/**
 * The fields of a checkpoint that only the runtime reads. Stores keep them as one JSON value
 * without looking inside (`encodeCheckpointRecord` makes it, `decodeCheckpointRecord` reads it
 * back; this file is the one place that names them), so a new field of this kind touches this
 * interface, its default in the codec below and the runtime that uses it, and no store.
 */
export interface CheckpointRecord {
  /** Steps the thread has taken over all its runs. */
  step: number;
  /** The node to run next; `null` once a run reached END. With a `frontier`, its first task's node. */
  currentNode: string | null;
  /**
   * What the next step runs when it is more than the one `currentNode`: several nodes in
   * parallel (fan-out), `Send` tasks, or joins waiting for more of their sources. `null` or
   * absent: the plain chain, `currentNode` alone. Plain JSON.
   */
  frontier?: Frontier | null;
  /** State fields other than `messages`. Plain JSON. */
  values: Record<string, unknown>;
  /** Interrupts waiting for an answer (status `interrupted`). */
  interrupts: Interrupt[];
  /** Answers given to interrupts of the current node, keyed by interrupt id. */
  resumeAnswers: Record<string, unknown>;
  /**
   * The run span of the run that wrote this checkpoint, as a W3C `traceparent`; absent when
   * that run was not traced. A run that continues or resumes the thread links its span to it.
   */
  trace?: string;
  /** The graph that wrote it; absent in a record written before graphs had versions. */
  graph?: GraphVersion;
  /**
   * The last static breakpoint the thread paused at (`interruptBefore`/`interruptAfter`): where
   * (`before` the step's nodes ran, or `after` the step before it), at which step, and the nodes
   * named. Kept by later writes, so a run continuing from a pause before step `step` does not
   * pause there again, even after a crash. Absent: never paused at one.
   */
  breakpoint?: BreakpointPause | null;
  /**
   * A subgraph's handoff: a node of the child's last step returned `new Command({ graph:
   * Command.PARENT, goto })`, ending the child's run. The parent's step, replayed after a crash,
   * reads it here and goes where the child said, without running the child again. Absent: none.
   */
  handoff?: ParentHandoff | null;
}

/** Where a child thread's last step sent its parent (see {@link CheckpointRecord.handoff}). */
export interface ParentHandoff {
  /** Nodes of the parent graph, in the order the child named them. */
  goto: string[];
}

/** Where a thread paused at a static breakpoint (see {@link CheckpointRecord.breakpoint}). */
export interface BreakpointPause {
  when: "before" | "after";
  /** The thread's step when it paused: the step about to run (`before`) or the next one (`after`). */
  step: number;
  /** The nodes the breakpoint named that the step runs (`before`) or ran (`after`). */
  nodes: string[];
}

/**
 * A {@link CheckpointRecord} as a store keeps it: one plain-JSON object, stored whole (a `jsonb`
 * or TEXT column, a field of the in-memory store) and never looked into by the store.
 */
export type EncodedCheckpointRecord = { readonly [field: string]: unknown };

/**
 * Every field of {@link CheckpointRecord}, each with the value it reads as when a stored record
 * lacks it (a row written before the field existed). The compiler holds this table to the
 * interface, so a field added there cannot be forgotten here; `undefined` marks an optional
 * field, left out of the record while empty.
 */
const FIELDS: { [Field in keyof Required<CheckpointRecord>]: () => CheckpointRecord[Field] } = {
  step: () => 0,
  currentNode: () => null,
  frontier: () => undefined,
  values: () => ({}),
  interrupts: () => [],
  resumeAnswers: () => ({}),
  trace: () => undefined,
  graph: () => undefined,
  breakpoint: () => undefined,
  handoff: () => undefined,
};

const NAMES = Object.keys(FIELDS) as (keyof CheckpointRecord)[];

/**
 * The runtime's fields of a checkpoint or write, as the one value a store keeps. An empty
 * optional field (the frontier of the plain chain: `null` or absent) is left out.
 */
export function encodeCheckpointRecord(fields: CheckpointRecord): EncodedCheckpointRecord {
  const record: Record<string, unknown> = {};
  for (const name of NAMES) {
    const value = fields[name];
    if (value !== undefined && (value !== null || FIELDS[name]() !== undefined)) {
      record[name] = value;
    }
  }
  return record;
}

/**
 * The runtime's fields from the value a store kept. Tolerant: a field the value lacks reads as
 * its default, and fields it does not know are ignored, so a record any release wrote reads.
 */
export function decodeCheckpointRecord(stored: EncodedCheckpointRecord): CheckpointRecord {
  const record: Record<string, unknown> = {};
  for (const name of NAMES) {
    const value = stored[name] ?? FIELDS[name]();
    if (value !== undefined) record[name] = value;
  }
  return record as unknown as CheckpointRecord;
}
