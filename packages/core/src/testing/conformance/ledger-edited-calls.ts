import { Message, type AssistantMessage } from "../../messages/message.js";
import { chargeAgent } from "./charge-agent.js";
import { newThreadId } from "./fixtures.js";
import type { GetCheckpointer } from "./fixtures.js";
import type { TestApi } from "./test-api.js";

/**
 * The ledger replays a call's own record only for the arguments it ran with. An assistant
 * message edited in place keeps its message id and call id, so its calls keep their ledger keys:
 * the record of the old arguments must neither answer the edited call nor be overwritten by it.
 */
export function ledgerEditedCallsConformance(get: GetCheckpointer, test: TestApi): void {
  const { describe, it, expect } = test;

  /**
   * Charges order 42 to the end of the turn, then edits the call in place with `editArguments`
   * (dropping the answers after it, so the tool node runs the call again) and continues.
   */
  async function editAndContinue(editArguments: string) {
    const charges: string[] = [];
    const app = chargeAgent(get(), charges);
    const threadId = newThreadId();
    await app.invoke({ messages: [Message.user("charge my order")] }, { threadId });
    const transcript = (await app.getState({ threadId }))!.values.messages;
    const asked = transcript.find((m): m is AssistantMessage => m.role === "assistant")!;
    const [call] = asked.toolCalls!;
    const edited = { ...asked, toolCalls: [{ ...call!, arguments: editArguments }] };
    const later = transcript.slice(transcript.indexOf(asked) + 1);
    await app.updateState(
      { threadId },
      { messages: [edited, ...later.map((m) => Message.remove(m.id))] },
      { asNode: "MAIN" },
    );
    const continued = await app.invoke(null, { threadId });
    const answers = continued.state.messages.filter((m) => m.role === "tool");
    const ledger = await app.getToolLedger({ threadId });
    return { charges, answers, ledger };
  }

  describe("edited tool calls", () => {
    it("never answers a call edited in place with the result recorded for its old arguments, nor runs it", async () => {
      const { charges, answers, ledger } = await editAndContinue('{"order_id":"999"}');

      // Order 999 was not charged, and "Charged order 42" did not answer the call for it.
      expect(charges).toEqual(["42"]);
      expect(answers).toHaveLength(1);
      expect(answers[0]).toMatchObject({ isError: true, toolCallId: "call_1" });
      expect(Message.text(answers[0]!)).toEqual(expect.stringContaining("[TOOL_CONFLICT_003]"));
      // The record of the charge that happened stays as it was.
      expect(ledger.map((e) => [e.toolName, e.status, e.attempt])).toEqual([
        ["charge_card", "completed", 1],
      ]);
      const [entry] = ledger;
      const recorded = entry?.status === "completed" ? entry.result : undefined;
      expect(recorded).toMatchObject({ value: { content: "Charged order 42" } });
    });

    it("still replays a call whose arguments were only reformatted", async () => {
      const { charges, answers } = await editAndContinue('{ "order_id" : "42" }');

      expect(charges).toEqual(["42"]);
      expect(answers.map((m) => Message.text(m))).toEqual(["Charged order 42"]);
    });
  });
}
