import { describe, expect, it } from "vitest";
import type { StaleStateError } from "../errors/errors.js";
import { isTenxgraphError } from "../errors/tenxgraph-error.js";
import type { CompiledGraph } from "../graph/compiled-graph.js";
import { END } from "../definition/edges.js";
import { StateGraph } from "../graph/state-graph.js";
import { Message } from "../messages/message.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import type { Checkpointer } from "../storage/checkpointer.js";
import { FaultPoints } from "../testing/fault-points.js";
import { FAULT_POINTS } from "../node/fault-points.js";
import type { RunConfig } from "./run-config.js";
import type { RunInput } from "./run-result.js";

type State = { messages: Message[] };

/** Node runs across every graph of a test, as `<node> after '<last user message>'`. */
let nodeRuns: string[] = [];

/** A → B → END; each node appends one reply. `beforeB` is awaited inside B (to hold a run there). */
function twoSteps(checkpointer: Checkpointer, beforeB?: () => Promise<void>) {
  const node = (name: string) => async (state: State) => {
    if (name === "B") await beforeB?.();
    const lastUser = state.messages.findLast((message) => message.role === "user");
    nodeRuns.push(`${name} after '${lastUser?.content as string}'`);
    return Message.assistant(name);
  };
  return new StateGraph<State>()
    .addNode("A", node("A"))
    .addNode("B", node("B"))
    .addEdge("A", "B")
    .addEdge("B", END)
    .setEntryPoint("A")
    .compile({ checkpointer });
}

/** The pattern users write: invoke, and on STORAGE_CONFLICT_001 invoke again with the same input. */
async function invokeRetryingOnConflict(
  app: CompiledGraph<State>,
  input: RunInput<State>,
  config: RunConfig,
  conflicts: StaleStateError[],
) {
  for (;;) {
    try {
      return await app.invoke(input, config);
    } catch (error) {
      if (!isTenxgraphError(error) || error.code !== "STORAGE_CONFLICT_001") throw error;
      conflicts.push(error as StaleStateError);
    }
  }
}

describe("retrying invoke(input) on StaleStateError", () => {
  it("after the run committed its input and a step: the input is not applied again, nor its turn run again", async () => {
    nodeRuns = [];
    const store = new InMemoryCheckpointer();
    let reachedB!: () => void;
    const atB = new Promise<void>((resolve) => (reachedB = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const mine = twoSteps(store, async () => {
      if (held) return;
      held = true;
      reachedB();
      await released;
    });
    const input = { messages: [Message.user("mine")] };
    const conflicts: StaleStateError[] = [];
    const retried = invokeRetryingOnConflict(mine, input, { threadId: "t" }, conflicts);
    // Mine has committed its input and A's step and is inside B when another turn lands.
    await atB;
    await twoSteps(store).invoke({ messages: [Message.user("other")] }, { threadId: "t" });
    release();
    const result = await retried;

    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]!.committed).toEqual({
      runId: expect.any(String),
      versions: [1, 2],
      inputCommitted: true,
      messageIds: [input.messages[0]!.id, expect.any(String)],
    });
    expect(conflicts[0]!.message).toMatch(/do not send its input again/);
    expect(result.status).toBe("completed");
    const transcript = result.state.messages.map((m) => `${m.role} ${m.content as string}`);
    expect(transcript).toEqual([
      "user mine",
      "assistant A",
      "user other",
      "assistant A",
      "assistant B",
    ]);
    // The other turn answered both messages; the retry ran no node (it found the input
    // committed and the thread finished). Mine's B finished last, and its step was refused.
    expect(nodeRuns).toEqual([
      "A after 'mine'",
      "A after 'other'",
      "B after 'other'",
      "B after 'mine'",
    ]);
  });

  it("when the conflict came at the start write: nothing was committed, and the retry runs the turn once", async () => {
    nodeRuns = [];
    const store = new InMemoryCheckpointer();
    const faults = new FaultPoints().arm(
      FAULT_POINTS.STEP_BEFORE_WRITE,
      async () => {
        await twoSteps(store).invoke({ messages: [Message.user("other")] }, { threadId: "t" });
      },
      { times: 1 },
    );
    const mine = new StateGraph<State>()
      .addNode("A", () => Message.assistant("A"))
      .addEdge("A", END)
      .setEntryPoint("A")
      .compile({ checkpointer: store, faultPoints: faults });
    const input = { messages: [Message.user("mine")] };
    const conflicts: StaleStateError[] = [];
    const result = await invokeRetryingOnConflict(mine, input, { threadId: "t" }, conflicts);

    expect(conflicts.map((conflict) => conflict.committed)).toEqual([
      { runId: expect.any(String), versions: [], inputCommitted: false, messageIds: [] },
    ]);
    expect(conflicts[0]!.message).toMatch(/Nothing of run .* was committed: retrying it is safe/);
    const transcript = result.state.messages.map((m) => `${m.role} ${m.content as string}`);
    expect(transcript).toEqual([
      ...["user other", "assistant A", "assistant B"],
      ...["user mine", "assistant A"],
    ]);
  });

  it("an input of which only some messages are in the thread is refused with INPUT_001", async () => {
    const store = new InMemoryCheckpointer();
    const app = twoSteps(store);
    const first = Message.user("first");
    await app.invoke({ messages: [first] }, { threadId: "t" });
    const mixed = app.invoke({ messages: [first, Message.user("new")] }, { threadId: "t" });
    await expect(mixed).rejects.toMatchObject({
      code: "INPUT_001",
      message: expect.stringMatching(/input\.messages\[0\] .* is already in thread 't'/),
    });
  });
});
