import { StaleStateError } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { Logger } from "../events/logger.js";
import { isGraphNode } from "../definition/graph-node.js";
import type { BaseState } from "../definition/reducers.js";
import { FAULT_POINTS } from "../node/fault-points.js";
import { inNamespace } from "../node/node-context.js";
import type { RunWatch } from "../node/run-watch.js";
import type { StepLedger } from "../node/step-ledger.js";
import type {
  CheckpointWrite,
  Interrupt,
  StepCommit,
  StepWrite,
  ThreadStatus,
} from "../storage/checkpointer.js";
import type { LedgerClaim } from "../storage/ledger-entry.js";
import type { CheckpointChunk, EmitRunEvent } from "./run-event.js";
import type { ResolvedRunConfig } from "./run-config.js";
import type { RunDependencies } from "./run-dependencies.js";
import type { Progress } from "./run-progress.js";
import { stepTasks } from "./step-tasks.js";
import { diffTranscript } from "./transcript-change.js";

/** What a run's step writer writes with. */
export interface StepWriterArgs<S extends BaseState> {
  deps: RunDependencies<S>;
  config: ResolvedRunConfig;
  runId: string;
  stepLedger: StepLedger;
  /** Holds the claims that ride in a write. */
  watch: RunWatch;
  emit: EmitRunEvent;
  logger: Logger;
  /** Whether the run's start write carries input (a new turn's update or a resume answer). */
  startCarriesInput: boolean;
  /** The run's span as a `traceparent`, recorded with each write; `undefined`: not traced. */
  trace: string | undefined;
}

/**
 * Writes a run's steps, each as one versioned write, and keeps what the run committed: a
 * `StaleStateError` that ends the run says which versions and messages are its own, and whether
 * its input is already in the thread.
 */
export class StepWriter<S extends BaseState> {
  readonly #args: StepWriterArgs<S>;
  readonly #committed = { versions: [] as number[], messageIds: [] as string[], input: false };

  constructor(args: StepWriterArgs<S>) {
    this.#args = args;
  }

  /**
   * One versioned write: the checkpoint plus the messages the store does not have yet, as a
   * compare-and-swap on the version this run last wrote or read, with the ledger writes that
   * ride in it (results waiting for it, and `claims` of the next node's calls). A non-durable
   * step goes to the store's cache when it has one (and is skipped when it has none); the next
   * durable write carries everything since. Results cannot ride in a cached step, so they are
   * recorded first, as they would have been when their tools returned. `written` runs once the
   * write (or the cache write, or the skip) is done, before the `state` event of a durable one.
   */
  async commit(
    progress: Progress<S>,
    status: ThreadStatus,
    interrupts: Interrupt[],
    durable: boolean,
    claims: readonly LedgerClaim[] = [],
    written: () => void = () => {},
  ): Promise<void> {
    const { deps, config, runId, stepLedger: ledger, watch, emit } = this.#args;
    const { checkpointer } = deps;
    if (!durable || !ledger.rides) await ledger.recordWaiting();
    if (!durable && !checkpointer.cacheStep) return written();
    const write = this.#checkpointWrite(progress, status, interrupts);
    // A cache that cannot take the step (Redis down) must not lose it: write it durably.
    if (!durable && (await checkpointer.cacheStep!(write))) return written();
    const { faultPoints } = deps;
    const context = faultPoints && {
      threadId: config.threadId,
      runId,
      node: progress.currentNode ?? "END",
    };
    if (context) await faultPoints.hit(FAULT_POINTS.STEP_BEFORE_WRITE, context);
    progress.version = ledger.rides
      ? await ledger.commitWith(claims, watch, async (writes) => {
          const committed = await this.#put(Object.assign({}, write, { ledger: writes }));
          return { result: committed.version, claims: committed.claims };
        })
      : (await this.#put(write)).version;
    noteDurable(progress, write);
    written();
    emit({
      type: "state",
      version: progress.version,
      step: progress.step,
      currentNode: progress.currentNode,
      status,
    });
    emit({ type: "checkpoint", checkpoint: checkpointChunk(progress, write) });
    if (context) await faultPoints.hit(FAULT_POINTS.STEP_AFTER_WRITE, context);
  }

  /**
   * The claims of the next node's calls that may ride in this step's write: those the node
   * names (`GraphNode.claimsAhead`, the `retry` calls of a tool node). None when the store
   * cannot commit them with the step.
   */
  claimsAhead(next: Progress<S>): LedgerClaim[] {
    const { deps, runId, stepLedger, logger } = this.#args;
    if (!stepLedger.rides) return [];
    return stepTasks(next).flatMap((task) => {
      const node = deps.graph.nodes.get(task.node);
      if (!node || !isGraphNode(node) || !node.claimsAhead) return [];
      try {
        const state = task.input ? { ...next.state, ...task.input } : next.state;
        // Named in the plain chain's namespace; the task's calls are keyed in its own.
        return node.claimsAhead(state).map(({ key, toolName }) => ({
          key: inNamespace(task.namespace, key),
          toolName,
          ownerRunId: runId,
          leaseMs: deps.claimStaleAfterMs,
          expectedAttempt: 0,
        }));
      } catch (error) {
        // Only a saving is lost: the node claims its calls itself when it runs.
        logger.warn({ err: error, node: task.node }, "Could not plan claims ahead");
        return [];
      }
    });
  }

  /**
   * One durable write (with its ledger writes, when it has any), noted in what this run
   * committed. A conflict is rethrown with that record, so the caller knows whether its input
   * is already in the thread before it retries.
   */
  async #put(write: CheckpointWrite | StepWrite): Promise<StepCommit> {
    const { checkpointer } = this.#args.deps;
    let committed: StepCommit;
    try {
      // A write with no ledger writes is a plain checkpoint write, on any store.
      committed =
        "ledger" in write && (write.ledger.completions.length > 0 || write.ledger.claims.length > 0)
          ? await checkpointer.commitStep!(write)
          : { version: await checkpointer.putCheckpoint(stripLedger(write)), claims: [] };
    } catch (error) {
      // By code: the store may have thrown it from another copy of this package.
      if (!isTenxgraphError(error, "STORAGE_CONFLICT_001")) throw error;
      const stale = error as StaleStateError;
      const { versions, messageIds, input } = this.#committed;
      throw new StaleStateError(stale.threadId, stale.expectedVersion, stale.actualVersion, {
        runId: this.#args.runId,
        versions: [...versions],
        inputCommitted: input,
        messageIds: [...messageIds],
      });
    }
    this.#committed.versions.push(committed.version);
    this.#committed.messageIds.push(...write.newMessages.map((message) => message.id));
    this.#committed.input ||= this.#args.startCarriesInput;
    return committed;
  }

  #checkpointWrite(
    progress: Progress<S>,
    status: ThreadStatus,
    interrupts: Interrupt[],
  ): CheckpointWrite {
    const { config, runId } = this.#args;
    const { messages, ...values } = progress.state;
    return {
      threadId: config.threadId,
      incarnation: progress.incarnation,
      userId: progress.userId,
      expectedVersion: progress.version,
      parentVersion: progress.forkOf ?? progress.version,
      node: progress.node,
      runId,
      step: progress.step,
      currentNode: progress.currentNode,
      frontier: progress.frontier,
      status,
      values,
      interrupts,
      resumeAnswers: progress.resumeAnswers,
      ...(progress.breakpoint === null ? {} : { breakpoint: progress.breakpoint }),
      ...(progress.handoff === undefined ? {} : { handoff: progress.handoff }),
      ...(this.#args.trace === undefined ? {} : { trace: this.#args.trace }),
      graph: this.#args.deps.graph.version,
      // Read by the store on the thread's first write only: a subgraph's thread names its parent.
      parentThreadId: config.parentThreadId,
      ...diffTranscript(progress.durable, messages),
    };
  }
}

/**
 * After a durable write: the store holds the run's transcript, the fork (if any) is made, and
 * the node's output is recorded. An appending write extends what the run knows is stored;
 * an edit or a removal makes it read the transcript afresh.
 */
function noteDurable<S extends BaseState>(progress: Progress<S>, write: CheckpointWrite): void {
  const edited = (write.replacedMessages?.length ?? 0) + (write.removedMessageIds?.length ?? 0) > 0;
  if (edited) {
    progress.durable = progress.state.messages.slice();
    progress.persistedIds = new Set(progress.durable.map((message) => message.id));
  } else {
    progress.durable.push(...write.newMessages);
    for (const message of write.newMessages) progress.persistedIds.add(message.id);
  }
  progress.persisted = progress.durable.length;
  progress.forkOf = null;
  progress.node = null;
}

/** The checkpoint write of a step write, without its (empty) ledger writes. */
function stripLedger(write: CheckpointWrite | StepWrite): CheckpointWrite {
  if (!("ledger" in write)) return write;
  const { ledger: _ledger, ...checkpoint } = write;
  return checkpoint;
}

/** The write just made, as `getState()` would show it (the `checkpoints` stream mode). */
function checkpointChunk<S extends BaseState>(
  progress: Progress<S>,
  write: CheckpointWrite,
): CheckpointChunk<S> {
  return {
    values: progress.state,
    version: progress.version,
    currentNode: write.currentNode,
    next: stepTasks(progress).map((task) => task.node),
    step: write.step,
    status: write.status,
    interrupts: write.interrupts,
    breakpoint: write.breakpoint ?? null,
    // A thread's first write has no parent (it is made from version 0).
    parentVersion: write.parentVersion || null,
    node: write.node ?? null,
    runId: write.runId ?? null,
  };
}
