import { isDeepStrictEqual } from "node:util";
import { InvalidRunError } from "../errors/errors.js";
import type { RunMode } from "../events/stream-event.js";
import type { BaseState, StateUpdate } from "../definition/reducers.js";
import { IN_DOUBT_INTERRUPT_KIND, parseInDoubtDecision } from "../node/in-doubt-decision.js";
import { Message, type MessageUpdate } from "../messages/message.js";
import { uuidv7 } from "../messages/ids.js";
import type { ResolvedRunConfig } from "./run-config.js";
import { isResumeInput, type ResumeInput, type RunInput } from "./run-result.js";
import type { LedgerEntry } from "../storage/ledger-entry.js";
import type { Interrupt, ThreadCheckpoint } from "../storage/checkpointer.js";
import { awaitLease } from "./run-lease.js";
import type { RunDependencies } from "./run-dependencies.js";
import { applyCallerUpdate, requireJson, requireSchema, validateInput } from "./caller-input.js";
import type { Progress } from "./run-progress.js";
import { loadThread, loadVersion, type ThreadSnapshot } from "./thread-snapshot.js";
import {
  migrateSnapshot,
  pendingCalls,
  requireContinuable,
  underNewIds,
} from "./thread-migration.js";

/**
 * Where a run begins: at a node to run, or already finished (continuing a completed thread).
 * `lease` is the run lease as it was seen free (see run-lease.ts), for a run that claims it.
 */
export type RunStart<S extends BaseState> = StartPoint<S> & {
  lease: LedgerEntry | undefined;
  /**
   * The thread's stop requests, counted with the first read of it: they are counted, never
   * cleared, and those made after that read are for this run.
   */
  stopRequestsAtStart: number;
  /** The run span that wrote the checkpoint the run starts from (`CheckpointRecord.trace`). */
  previousTrace: string | undefined;
};

type StartPoint<S extends BaseState> =
  | { kind: "run"; mode: RunMode; progress: Progress<S> }
  | { kind: "finished"; progress: Progress<S> };

/**
 * Loads the thread and turns the input into the run's starting point: a new turn from the entry
 * point, an answer to a pending interrupt, or a continuation from the current node.
 */
export async function resolveStart<S extends BaseState>(
  deps: RunDependencies<S>,
  config: ResolvedRunConfig,
  input: RunInput<S>,
  signal: AbortSignal,
): Promise<RunStart<S>> {
  const {
    snapshot: latest,
    lease,
    stopRequestsAtStart,
  } = await loadWithoutLiveRun(deps, config, signal);
  const begins = { lease, stopRequestsAtStart };
  const written =
    config.fromVersion === null
      ? latest
      : await forkPoint(deps, config.threadId, config.fromVersion, latest);
  // A thread another version of the graph wrote, as this one runs it (see thread-migration.ts).
  const snapshot = migrateSnapshot(deps.graph, written);
  const previousTrace = snapshot?.checkpoint.trace;
  if (input === null)
    return { ...continueRun<S>(deps, snapshot, config), ...begins, previousTrace };
  if (isResumeInput(input)) {
    return { ...resumeRun<S>(deps, snapshot, config, input), ...begins, previousTrace };
  }
  // A Command without `resume` is refused by newTurn's input check.
  return { ...newTurn(deps, snapshot, config, input as StateUpdate<S>), ...begins, previousTrace };
}

/**
 * A fork's starting point: the thread as it was at `fromVersion`, written as the next
 * version of its latest (the compare-and-swap is on the latest version, as for any run).
 */
export async function forkPoint<S extends BaseState>(
  deps: RunDependencies<S>,
  threadId: string,
  fromVersion: number,
  latest: ThreadSnapshot | null,
): Promise<ThreadSnapshot> {
  const past = latest && (await loadVersion(deps.checkpointer, threadId, fromVersion));
  if (!latest || !past) {
    throw new InvalidRunError(
      latest ? "THREAD_005" : "THREAD_001",
      latest
        ? `Thread '${threadId}' has no version ${fromVersion} to fork from ` +
            `(latest: ${latest.checkpoint.version}; pruned versions cannot be forked)`
        : `Thread '${threadId}' does not exist: nothing to fork`,
    );
  }
  const { version, incarnation } = latest.checkpoint;
  return {
    checkpoint: { ...past.checkpoint, version, incarnation },
    messages: past.messages,
    durable: past.messages,
    forkOf: fromVersion,
  };
}

/**
 * Loads the thread once no live run holds its lease. Only a run with
 * `durableCheckpointEveryStep: false` holds one, and any run writes `running` durably at its
 * start, so a durable run looks at the lease only on a `running` thread.
 */
async function loadWithoutLiveRun<S extends BaseState>(
  deps: RunDependencies<S>,
  config: ResolvedRunConfig,
  signal: AbortSignal,
): Promise<{
  snapshot: ThreadSnapshot | null;
  lease: LedgerEntry | undefined;
  stopRequestsAtStart: number;
}> {
  // The host's read stands in for the first one only: after a wait, read afresh.
  const first =
    config.loadedThread ?? (await deps.checkpointer.getCheckpointAndStops(config.threadId));
  const stopRequestsAtStart = first.stopRequests;
  let known: ThreadCheckpoint | null | undefined = first.checkpoint;
  for (;;) {
    const snapshot = await loadThread(deps.checkpointer, config.threadId, known);
    known = undefined;
    const mayBeLive = snapshot?.checkpoint.status === "running";
    if (!mayBeLive && config.durableCheckpointEveryStep) {
      return { snapshot, lease: undefined, stopRequestsAtStart };
    }
    const lease = await awaitLease(deps, config.threadId, signal);
    // The holder ended (its terminal write is in) or another run took over: read again.
    if (lease.kind === "free") return { snapshot, lease: lease.entry, stopRequestsAtStart };
  }
}

function continueRun<S extends BaseState>(
  deps: RunDependencies<S>,
  snapshot: ThreadSnapshot | null,
  config: ResolvedRunConfig,
): StartPoint<S> {
  if (!snapshot) {
    throw new InvalidRunError(
      "THREAD_001",
      `Thread '${config.threadId}' does not exist: nothing to continue (start it with an input)`,
    );
  }
  requireNotInterrupted(snapshot);
  requireContinuable(deps.graph, snapshot, remoteToolNames(config));
  const progress = toProgress<S>(snapshot, config);
  if (progress.currentNode === null) return { kind: "finished", progress };
  return { kind: "run", mode: "continue", progress };
}

function resumeRun<S extends BaseState>(
  deps: RunDependencies<S>,
  snapshot: ThreadSnapshot | null,
  config: ResolvedRunConfig,
  input: ResumeInput,
): StartPoint<S> {
  if (!snapshot || snapshot.checkpoint.status !== "interrupted") {
    throw new InvalidRunError(
      "RESUME_003",
      `Thread '${config.threadId}' is not waiting for an answer ` +
        `(status: ${snapshot?.checkpoint.status ?? "no such thread"}); nothing to resume`,
    );
  }
  if (isBreakpointPause(snapshot)) {
    throw new InvalidRunError(
      "RESUME_003",
      `Thread '${config.threadId}' paused at a breakpoint, not for an answer: ` +
        `continue it with invoke(null, { threadId })`,
    );
  }
  requireJson(input.resume, "input.resume");
  requireContinuable(deps.graph, snapshot, remoteToolNames(config));
  const pending = snapshot.checkpoint.interrupts;
  const answers = answersOf(input, pending, config.threadId);
  // Checked before they are stored, so a malformed answer cannot wedge the thread.
  for (const [id, answer] of Object.entries(answers)) {
    const answered = pending.find((i) => i.id === id)!;
    if ((answered.value as { kind?: unknown } | null)?.kind === IN_DOUBT_INTERRUPT_KIND) {
      parseInDoubtDecision(answer);
    }
  }
  const progress = toProgress<S>(snapshot, config);
  progress.resumeAnswers = {
    ...progress.resumeAnswers,
    ...underNewIds(answers, snapshot.answerIds),
  };
  return { kind: "run", mode: "resume", progress };
}

/**
 * The answers a resume gives, by interrupt id: the one named by `interruptId`; or, as
 * LangGraph.js's `Command({ resume: { [interruptId]: answer } })` does, every interrupt a key of
 * a `resume` object names (a map of answers, when any key is a pending interrupt's id); or the
 * one pending interrupt.
 */
function answersOf(
  input: ResumeInput,
  pending: readonly Interrupt[],
  threadId: string,
): Record<string, unknown> {
  const pendingIds = pending.map((i) => i.id);
  if (input.interruptId === undefined && isAnswerMap(input.resume, pendingIds)) {
    for (const id of Object.keys(input.resume)) pickInterrupt(pendingIds, id, threadId);
    return { ...input.resume };
  }
  return { [pickInterrupt(pendingIds, input.interruptId, threadId)]: input.resume };
}

function isAnswerMap(
  resume: unknown,
  pendingIds: readonly string[],
): resume is Record<string, unknown> {
  if (typeof resume !== "object" || resume === null || Array.isArray(resume)) return false;
  return Object.keys(resume).some((key) => pendingIds.includes(key));
}

function pickInterrupt(
  pendingIds: string[],
  requested: string | undefined,
  threadId: string,
): string {
  if (requested !== undefined) {
    if (!pendingIds.includes(requested)) {
      throw new InvalidRunError(
        "RESUME_002",
        `No pending interrupt '${requested}' on thread '${threadId}' (pending: ${pendingIds.join(", ")})`,
      );
    }
    return requested;
  }
  if (pendingIds.length !== 1) {
    throw new InvalidRunError(
      "RESUME_001",
      `Thread '${threadId}' has ${pendingIds.length} pending interrupts: ` +
        `name the one you answer with interruptId (one of: ${pendingIds.join(", ")}), ` +
        `or answer several at once with { resume: { [interruptId]: answer } }`,
    );
  }
  return pendingIds[0]!;
}

function newTurn<S extends BaseState>(
  deps: RunDependencies<S>,
  snapshot: ThreadSnapshot | null,
  config: ResolvedRunConfig,
  input: StateUpdate<S>,
): StartPoint<S> {
  validateInput(input);
  if (snapshot && isCommittedInput(snapshot, input)) return continueRun(deps, snapshot, config);
  if (snapshot) {
    requireNotInterrupted(snapshot);
    requireNoPendingCalls(snapshot);
  }
  const progress: Progress<S> = snapshot
    ? toProgress<S>(snapshot, config)
    : {
        version: 0,
        // Always a fresh UUID, not the configurable message ids: it must never repeat anywhere.
        incarnation: uuidv7(),
        step: 0,
        currentNode: null,
        frontier: null,
        state: { ...structuredClone(deps.graph.initialState), messages: [] } as unknown as S,
        durable: [],
        persisted: 0,
        resumeAnswers: {},
        userId: config.userId,
        persistedIds: new Set(),
        node: null,
        forkOf: null,
        breakpoint: null,
      };
  applyCallerUpdate(deps, progress.state, input);
  requireSchema(deps, progress.state);
  progress.currentNode = deps.graph.entryPoint;
  // A new turn starts from the entry point alone, whatever fan-out the last one was left in.
  progress.frontier = null;
  progress.resumeAnswers = {};
  // A new turn passes no breakpoint: its entry node is checked like any other.
  progress.breakpoint = null;
  return { kind: "run", mode: "new", progress };
}

/**
 * True when every message of the input is already in the thread: the input was committed by an
 * earlier run (one rejected with `StaleStateError` after its start write, say), together with
 * its other fields. Applying it again would answer it twice, so the run continues the thread
 * instead: retrying `invoke(input)` on a conflict is safe as long as the input object is the
 * same. An input of which only some messages are in the thread is a mistake, refused.
 */
function isCommittedInput(snapshot: ThreadSnapshot, input: object): boolean {
  const messages = ((input as { messages?: MessageUpdate[] }).messages ?? []).filter(
    (item): item is Message => !Message.isRemoval(item),
  );
  if (messages.length === 0) return false;
  const known = new Map(snapshot.messages.map((message) => [message.id, message]));
  // A known id with other content is an edit of that message, not a retry.
  const committed = messages.map((message) => {
    const stored = known.get(message.id);
    return stored !== undefined && isDeepStrictEqual(stored, message);
  });
  if (committed.every(Boolean)) return true;
  const first = committed.indexOf(true);
  if (first === -1) return false;
  throw new InvalidRunError(
    "INPUT_001",
    `input.messages[${first}] (id '${messages[first]!.id}') is already in thread ` +
      `'${snapshot.checkpoint.threadId}' but input.messages[${committed.indexOf(false)}] is ` +
      `not: send only new messages (a retry of a committed input sends it unchanged)`,
  );
}

/**
 * A thread waiting for answers takes none but them. A pause at a static breakpoint waits for no
 * answer: `invoke(null)` continues it, and a new turn may start over it, as in LangGraph.js.
 */
function requireNotInterrupted(snapshot: ThreadSnapshot): void {
  const { status, interrupts, threadId } = snapshot.checkpoint;
  if (status !== "interrupted" || isBreakpointPause(snapshot)) return;
  throw new InvalidRunError(
    "THREAD_002",
    `Thread '${threadId}' waits for an answer to ${interrupts.map((i) => `'${i.id}'`).join(", ")}: ` +
      `resume it with invoke({ resume: answer, interruptId }, { threadId })`,
  );
}

/** Paused at a static breakpoint: `interrupted`, with no interrupt to answer. */
function isBreakpointPause(snapshot: ThreadSnapshot): boolean {
  const { status, interrupts, breakpoint } = snapshot.checkpoint;
  return status === "interrupted" && interrupts.length === 0 && breakpoint != null;
}

/**
 * A new turn while the model's last tool calls are unanswered would leave them so for good, and
 * model providers refuse such a transcript; it would also race a tool node still running
 * elsewhere. Any other unfinished run (stopped while the model wrote, failed in a node that
 * keeps failing) may be left behind by a new turn.
 */
function requireNoPendingCalls(snapshot: ThreadSnapshot): void {
  const { currentNode, threadId, status } = snapshot.checkpoint;
  if (currentNode === null) return;
  const pending = unansweredCalls(snapshot.messages);
  if (pending.length === 0) return;
  // A `running` thread may be live in another process or left by a crash; nothing here can
  // tell which, so the message names both. Continuing is safe either way: the calls a live
  // run holds are waited on, never run twice, and its next write fails as stale.
  const why =
    status === "running"
      ? "a run is answering them now, perhaps in another process, or it crashed: wait for it to end, or continue it"
      : "continue it";
  throw new InvalidRunError(
    "THREAD_003",
    `Thread '${threadId}' has tool calls that are not answered yet (${pending.join(", ")}; ` +
      `run status '${status}' at node '${currentNode}'): ${why} with invoke(null, { threadId }) ` +
      `before starting a new turn`,
  );
}

/** Ids of the last assistant message's tool calls that no later tool message answers. */
function unansweredCalls(messages: readonly Message[]): string[] {
  return pendingCalls(messages).map((call) => call.id);
}

/** The run's remote tools' names: a pending call of one is the caller's to answer. */
function remoteToolNames(config: ResolvedRunConfig): Set<string> {
  return new Set(config.remoteTools.map((spec) => spec.name));
}

function toProgress<S extends BaseState>(
  snapshot: ThreadSnapshot,
  config: ResolvedRunConfig,
): Progress<S> {
  const { checkpoint, messages } = snapshot;
  const durable = snapshot.durable.slice();
  return {
    version: checkpoint.version,
    incarnation: checkpoint.incarnation,
    step: checkpoint.step,
    currentNode: checkpoint.currentNode,
    frontier: checkpoint.frontier ?? null,
    state: { ...checkpoint.values, messages } as unknown as S,
    durable,
    persisted: durable.length,
    resumeAnswers: { ...checkpoint.resumeAnswers },
    userId: config.userId ?? checkpoint.userId,
    persistedIds: new Set(durable.map((message) => message.id)),
    node: null,
    forkOf: snapshot.forkOf ?? null,
    breakpoint: checkpoint.breakpoint ?? null,
  };
}
