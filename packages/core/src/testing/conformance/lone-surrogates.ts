import { z } from "zod";
import { END } from "../../definition/edges.js";
import { StateGraph } from "../../graph/state-graph.js";
import { silentLogger } from "../../events/logger.js";
import { Message } from "../../messages/message.js";
import type { Checkpointer, StepWrite } from "../../storage/checkpointer.js";
import { ToolNode } from "../../tools/tool-node.js";
import { tool } from "../../tools/tool.js";
import { ScriptedModel } from "../scripted-model.js";
import { checkpointWrite, claim, createThread, newThreadId } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/** The first half of 😀 alone: what `"😀".slice(0, 1)` leaves. */
const HIGH = "😀".slice(0, 1);
/** The second half of 😀 alone. */
const LOW = "😀".slice(1);
/** Tool output cut in the middle of an emoji, as `text.slice(0, n)` cuts it. */
const CUT = "Order 4821 shipped 🎉".slice(0, -1);

/**
 * JSON holding lone surrogates everywhere JSON can: in strings and in keys, alone, at either
 * end, the low half before the high, beside a whole pair. (No U+0000: a store that handles it
 * must not pass this for that reason.)
 */
const ODD = {
  [`key${HIGH}`]: `value${LOW}`,
  [`${LOW}key`]: [HIGH, LOW, `${LOW}${HIGH}`, "😀", `a${HIGH}😀${LOW}b`],
  nested: { [HIGH]: { [LOW]: CUT }, list: [{ [`${HIGH}${HIGH}`]: null }] },
  "\\ud83d": "a backslash, then letters that spell a surrogate's escape",
};

/**
 * A JavaScript string may hold a lone UTF-16 surrogate: half of an emoji, as `text.slice(0, n)`
 * leaves it. Every store keeps such a value exactly, wherever a value goes (state, interrupts,
 * answers, a frontier, messages, ledger results), so a tool that returns one is recorded like
 * any other and never runs again because its result could not be written.
 */
export function loneSurrogatesConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;

  describe("lone surrogates", () => {
    it("round-trips values holding lone surrogates (high and low, in keys too) exactly", async () => {
      const checkpointer = get();
      const threadId = newThreadId();
      const assistant = {
        ...Message.assistant(CUT, [{ id: "call_1", name: "lookup", arguments: `{"q":"${HIGH}"}` }]),
        metadata: ODD,
      };
      const fields = {
        values: ODD,
        interrupts: [{ id: "m1:call_1", value: ODD, message: CUT, node: "TOOL" }],
        resumeAnswers: { "m1:call_0": ODD },
        frontier: { tasks: [{ node: "WORKER", input: ODD }], joins: {} },
        newMessages: [Message.user(`${LOW}hello${HIGH}`), assistant],
      };
      await checkpointer.putCheckpoint(checkpointWrite(threadId, 0, fields));
      const edited = { ...assistant, content: `${HIGH}edited${LOW}` };
      await checkpointer.putCheckpoint(
        checkpointWrite(threadId, 1, { ...fields, replacedMessages: [edited], newMessages: [] }),
      );

      for (const read of [
        await checkpointer.getCheckpoint(threadId),
        await checkpointer.getVersion(threadId, 1),
        (await checkpointer.listVersions(threadId))[0],
      ]) {
        expect(read?.values).toStrictEqual(fields.values);
        expect(read?.interrupts).toStrictEqual(fields.interrupts);
        expect(read?.resumeAnswers).toStrictEqual(fields.resumeAnswers);
        expect(read?.frontier).toStrictEqual(fields.frontier);
      }
      expect(await checkpointer.listMessages(threadId, { version: 1 })).toStrictEqual(
        fields.newMessages,
      );
      expect(await checkpointer.listMessages(threadId)).toStrictEqual([
        fields.newMessages[0],
        edited,
      ]);
    });

    it("records ledger results holding lone surrogates exactly, alone and in a step write", async () => {
      const checkpointer = get();
      const threadId = await createThread(checkpointer);
      const alone = { __kind__: "raw", value: ODD };
      const riding = { __kind__: "message", value: Message.tool("call_2", CUT), stateChanges: ODD };
      await checkpointer.claimCalls(threadId, [
        claim("m1:call_1", "run-a"),
        claim("m1:call_2", "run-a"),
      ]);
      expect(
        await checkpointer.completeCall(threadId, { key: "m1:call_1", attempt: 1 }, alone),
      ).toBe(true);
      if (checkpointer.commitStep) {
        const step: StepWrite = {
          ...checkpointWrite(threadId, 1),
          ledger: {
            completions: [{ attempt: { key: "m1:call_2", attempt: 1 }, result: riding }],
            claims: [],
          },
        };
        await checkpointer.commitStep(step);
      } else {
        await checkpointer.completeCall(threadId, { key: "m1:call_2", attempt: 1 }, riding);
      }

      const results = (await checkpointer.listCalls(threadId)).map((entry) =>
        entry.status === "completed" ? entry.result : entry.status,
      );
      expect(results).toStrictEqual([alone, riding]);
      const [again] = await checkpointer.getCalls(threadId, ["m1:call_1"]);
      expect(again?.status === "completed" && again.result).toStrictEqual(alone);
      // A lost claim reports the entry that is there, its result read back the same way.
      const [lost] = await checkpointer.claimCalls(threadId, [claim("m1:call_2", "run-b")]);
      expect(
        lost?.won === false && lost.entry.status === "completed" && lost.entry.result,
      ).toStrictEqual(riding);
    });

    it("records a tool result holding a lone surrogate once, and replays it exactly instead of running again", async () => {
      const effects: string[] = [];
      const app = cutTextAgent(get(), effects);
      const threadId = newThreadId();
      const done = await app.invoke(
        { messages: [Message.user("where is my order?")] },
        { threadId },
      );

      expect(done.status).toBe("completed");
      expect(effects).toEqual([`lookup ${HIGH}`]);
      const answered = done.state.messages.find((m) => m.role === "tool");
      expect(answered && Message.text(answered)).toBe(CUT);
      const ledger = await app.getToolLedger({ threadId });
      expect(ledger.map((e) => [e.toolName, e.status, e.attempt])).toEqual([
        ["lookup", "completed", 1],
      ]);

      // Continuing, and running the tool step again from the version that asked for the call,
      // replay the record: the tool never runs a second time.
      await app.invoke(null, { threadId });
      const history = await app.getStateHistory({ threadId });
      const asked = history.find((version) => version.nextNode === "TOOL");
      expect(asked, "the version whose next node is the tool node").toBeDefined();
      const again = await app.invoke(null, { threadId, fromVersion: asked!.version });
      expect(effects).toEqual([`lookup ${HIGH}`]);
      const replayed = again.state.messages.filter((m) => m.role === "tool");
      expect(replayed.map((m) => Message.text(m))).toStrictEqual([CUT]);
      // The call's recorded update, applied again by the replay.
      expect((again.state as Record<string, unknown>)[`note${LOW}`]).toBe(CUT);
    });
  });
}

/**
 * A model that asks for `lookup` (its text and the call's argument cut mid-emoji), a tool that
 * answers with cut text and writes a cut state field, then "Done.".
 */
function cutTextAgent(checkpointer: Checkpointer, effects: string[]) {
  const lookup = tool({
    name: "lookup",
    description: "Look an order up.",
    schema: z.object({ q: z.string() }),
    execute: (args, ctx) => {
      effects.push(`lookup ${args.q}`);
      ctx.update({ [`note${LOW}`]: CUT });
      return CUT;
    },
  });
  return new StateGraph()
    .addNode(
      "MAIN",
      new ScriptedModel([
        { text: CUT, toolCalls: [{ name: "lookup", args: { q: HIGH } }] },
        "Done.",
      ]),
    )
    .addNode("TOOL", new ToolNode([lookup]))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls?.length ? "TOOL" : END;
    })
    .addEdge("TOOL", "MAIN")
    .setEntryPoint("MAIN")
    .compile({ checkpointer, logger: silentLogger });
}
