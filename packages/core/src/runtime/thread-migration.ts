import { errorText, InvalidRunError } from "../errors/errors.js";
import { isGraphNode } from "../definition/graph-node.js";
import type { GraphMigration } from "../definition/graph-migrations.js";
import { sameVersion } from "../definition/graph-version.js";
import type { BaseState } from "../definition/reducers.js";
import { deepCopy } from "../definition/state-copy.js";
import type { Message, ToolCall } from "../messages/message.js";
import type { Frontier, GraphVersion, Interrupt } from "../storage/checkpointer.js";
import { findNonJson } from "../storage/json-check.js";
import type { GraphDefinition } from "../definition/graph-definition.js";
import type { Checkpointer, ThreadCheckpoint } from "../storage/checkpointer.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import { stepTasks } from "./step-tasks.js";
import { loadThread, type ThreadSnapshot } from "./thread-snapshot.js";

/**
 * The thread as this graph runs it. A thread this version wrote is returned as it is (one
 * comparison: the version is computed once, by `compile()`). Another version's thread is carried
 * over by the migration from its version, when the graph has one: renamed nodes in its position
 * and interrupts, its state through `state`. Nothing is written here: the run's first write
 * records the carried-over thread with this graph's version, and a run that is refused leaves
 * the thread as it was.
 */
export function migrateSnapshot<S extends BaseState>(
  graph: GraphDefinition<S>,
  snapshot: ThreadSnapshot | null,
): ThreadSnapshot | null {
  const { version, migrations } = graph;
  const recorded = snapshot?.checkpoint.graph;
  if (!snapshot || !recorded || sameVersion(recorded, version)) return snapshot;
  const migration =
    (recorded.version !== undefined ? migrations.byFrom.get(recorded.version) : undefined) ??
    migrations.byFrom.get(recorded.fingerprint);
  if (!migration) return snapshot;
  const { checkpoint } = snapshot;
  const rename = (node: string) => migration.nodes?.[node] ?? node;
  const renamedHere = checkpoint.currentNode !== null && rename(checkpoint.currentNode);
  if (!checkpoint.frontier && renamedHere && renamedHere !== checkpoint.currentNode) {
    requireNoChildThread(graph, checkpoint.threadId, renamedHere);
  }
  const ids = checkpoint.frontier
    ? new Map<string, string>()
    : idRenames(checkpoint.interrupts, rename);
  return {
    ...snapshot,
    checkpoint: {
      ...checkpoint,
      currentNode: checkpoint.currentNode === null ? null : rename(checkpoint.currentNode),
      frontier: checkpoint.frontier ? renameFrontier(checkpoint.frontier, rename) : null,
      // Ids stay: the caller answers by the id it was given (see `answerIds`).
      interrupts: checkpoint.interrupts.map((interrupt) => ({
        ...interrupt,
        node: rename(interrupt.node),
      })),
      resumeAnswers: underNewIds(checkpoint.resumeAnswers, ids),
      values: migratedValues(migration, checkpoint.values, checkpoint.threadId),
    },
    ...(ids.size > 0 ? { answerIds: ids } : {}),
  };
}

/** Answers keyed by the ids their interrupts are raised by now (see `ThreadSnapshot.answerIds`). */
export function underNewIds(
  answers: Readonly<Record<string, unknown>>,
  ids: ReadonlyMap<string, string> | undefined,
): Record<string, unknown> {
  if (!ids || ids.size === 0) return { ...answers };
  return Object.fromEntries(
    Object.entries(answers).map(([id, answer]) => [ids.get(id) ?? id, answer]),
  );
}

/**
 * Refuses (`THREAD_007`, nothing written) to continue a thread of another version when this
 * graph lacks what it needs: the node(s) of its next step, the tool of each call waiting for a
 * tool node there (in doubt or not), or arguments those calls recorded that the tool's schema
 * no longer accepts. A thread of this version is not looked at.
 */
export function requireContinuable<S extends BaseState>(
  graph: GraphDefinition<S>,
  snapshot: ThreadSnapshot,
  remoteToolNames: ReadonlySet<string> = new Set(),
): void {
  const { checkpoint } = snapshot;
  if (sameVersion(checkpoint.graph, graph.version)) return;
  const missing: string[] = [];
  const calls = pendingCalls(snapshot.messages);
  for (const task of stepTasks({
    currentNode: checkpoint.currentNode,
    frontier: checkpoint.frontier ?? null,
  })) {
    const node = graph.nodes.get(task.node);
    if (!node) {
      missing.push(`node '${task.node}'`);
      continue;
    }
    if (!isGraphNode(node) || !node.tools) continue;
    for (const call of calls) {
      if (remoteToolNames.has(call.name)) continue;
      const name = graph.migrations.toolRenames.get(call.name) ?? call.name;
      const tool = node.tools.find((candidate) => candidate.name === name);
      if (!tool)
        missing.push(`tool '${call.name}' (pending call '${call.id}' at node '${task.node}')`);
      else if (!argumentsParse(call, tool.schema)) {
        missing.push(`arguments of pending call '${call.id}' that tool '${name}' accepts`);
      }
    }
  }
  if (missing.length === 0) return;
  throw new InvalidRunError(
    "THREAD_007",
    `Thread '${checkpoint.threadId}' was written by graph version ${describe(checkpoint.graph)} and ` +
      `this graph (version ${describe(graph.version)}) cannot continue it: it has no ` +
      `${missing.join(", no ")}. Nothing was written: continue it with a graph that has them, or ` +
      `carry it over with compile({ migrations })`,
  );
}

/**
 * Why `graph` cannot continue the thread (its `THREAD_007` error, as a run would refuse), or
 * `null` when it can or the thread does not exist. Reads the thread (its checkpoint only when
 * `read` does not hand it in: a host that reads it anyway for the run shares the one read);
 * writes nothing. For hosts that pick runs for a graph (a worker of a rolling deploy declines
 * the runs it cannot continue).
 */
export async function continuationRefusal<S extends BaseState>(
  graph: GraphDefinition<S>,
  checkpointer: Checkpointer,
  threadId: string,
  read?: ThreadCheckpoint | null,
): Promise<InvalidRunError | null> {
  const checkpoint = read === undefined ? await checkpointer.getCheckpoint(threadId) : read;
  // This version's own thread (the common case) costs one read, not its transcript.
  if (!checkpoint || sameVersion(checkpoint.graph, graph.version)) return null;
  try {
    const snapshot = migrateSnapshot(graph, await loadThread(checkpointer, threadId, checkpoint));
    if (snapshot) requireContinuable(graph, snapshot);
    return null;
  } catch (error) {
    if (isTenxgraphError(error, "THREAD_007")) return error as InvalidRunError;
    throw error;
  }
}

/** The last assistant message's tool calls that no later tool message answers. */
export function pendingCalls(messages: readonly Message[]): ToolCall[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "assistant") continue;
    const answered = new Set(
      messages.slice(i + 1).flatMap((m) => (m.role === "tool" ? [m.toolCallId] : [])),
    );
    return (message.toolCalls ?? []).filter((call) => !answered.has(call.id));
  }
  return [];
}

/**
 * A task whose node is renamed keeps the namespace it had under its former name: its calls'
 * ledger keys, its interrupts' ids and its child thread are named by it.
 */
function renameFrontier(frontier: Frontier, rename: (node: string) => string): Frontier {
  const tasks = frontier.tasks.map((task, index) => {
    const node = rename(task.node);
    if (node === task.node) return task;
    const namespace =
      task.namespace ?? (task.input === undefined ? task.node : `${task.node}:${index}`);
    return { ...task, node, namespace };
  });
  const joins = Object.fromEntries(
    Object.entries(frontier.joins).map(([target, done]) => [rename(target), done.map(rename)]),
  );
  return { tasks, joins };
}

/**
 * In the plain chain a node's own interrupts are named `<node>:<step>…`; a renamed node raises
 * them under its new name, so their answers are filed under the new ids, or the node would
 * never find them. A tool call's interrupt is named by its call and keeps its id.
 */
function idRenames(
  interrupts: readonly Interrupt[],
  rename: (node: string) => string,
): Map<string, string> {
  const ids = new Map<string, string>();
  for (const { id, node, toolCallId } of interrupts) {
    const next = rename(node);
    if (next !== node && toolCallId === undefined && id.startsWith(`${node}:`)) {
      ids.set(id, `${next}${id.slice(node.length)}`);
    }
  }
  return ids;
}

/** A subgraph node's child thread is named by the node: renamed, the child would be lost. */
function requireNoChildThread<S extends BaseState>(
  graph: GraphDefinition<S>,
  threadId: string,
  renamed: string,
): void {
  const node = graph.nodes.get(renamed);
  if (!node || !isGraphNode(node) || node.versionShape?.().subgraph === undefined) return;
  throw new InvalidRunError(
    "THREAD_007",
    `Thread '${threadId}' stands at subgraph node '${renamed}' under its former name: its child ` +
      `thread is named by that name, so the rename cannot carry it over. Nothing was written: ` +
      `finish the thread with the graph that wrote it`,
  );
}

function migratedValues(
  migration: GraphMigration,
  values: Record<string, unknown>,
  threadId: string,
): Record<string, unknown> {
  if (!migration.state) return values;
  const problem = (what: string) =>
    new InvalidRunError(
      "THREAD_007",
      `Thread '${threadId}': the migration from '${migration.from}' ${what}. Nothing was written`,
    );
  let migrated: unknown;
  try {
    migrated = migration.state(deepCopy(values));
  } catch (error) {
    throw problem(`threw in state(): ${errorText(error)}`);
  }
  if (typeof migrated !== "object" || migrated === null || Array.isArray(migrated)) {
    throw problem("returned a state that is not an object of fields");
  }
  const notJson = findNonJson(migrated, "state");
  if (notJson !== null) throw problem(`returned a state that cannot be stored: ${notJson}`);
  return migrated as Record<string, unknown>;
}

function argumentsParse(
  call: ToolCall,
  schema: { safeParse(value: unknown): { success: boolean } },
): boolean {
  try {
    return schema.safeParse(call.arguments.trim() === "" ? {} : JSON.parse(call.arguments)).success;
  } catch {
    return false;
  }
}

function describe(version: GraphVersion | undefined): string {
  if (!version) return "unknown (written before graphs had versions)";
  const shape = version.fingerprint.slice(0, 19);
  return version.version === undefined ? shape : `'${version.version}' (${shape})`;
}
