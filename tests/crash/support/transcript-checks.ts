import { decodeEnvelope, ledgerKey } from "@tenxgraph/core/testing";
import { type AssistantMessage, type Message, type ToolCall } from "@tenxgraph/core";
import { type LedgerEntry } from "@tenxgraph/core/storage";
import { expect } from "vitest";
import type { StoredThread } from "./crash-scene.js";
import { version1Name } from "./graph-versions.js";

/**
 * The transcript only grows, without duplicate ids; each call is answered once (or not yet) by
 * the message its ledger entry recorded, and each answer follows the call it answers.
 */
export function checkTranscript(
  stored: StoredThread,
  previous: StoredThread | null,
  at: string,
  finished: boolean,
): void {
  const { messages } = stored;
  const ids = messages.map((m) => m.id);
  expect(ids.length - new Set(ids).size, `${at}: duplicate message ids`).toBe(0);
  const before = previous?.messages ?? [];
  expect(messages.slice(0, before.length), `${at}: persisted messages changed or lost`).toEqual(
    before,
  );
  expect(stored.checkpoint?.messageCount ?? 0, `${at}: stored message count`).toBe(messages.length);
  const entries = new Map(stored.ledger.map((e) => [e.key, e]));
  messages.forEach((message, i) => {
    if (message.role === "assistant" && message.toolCalls?.length) {
      checkAnswers(messages, i, entries, at, finished);
    }
    if (message.role === "tool") {
      let issuer = i - 1;
      while (messages[issuer]?.role === "tool") issuer -= 1;
      const calls = (messages[issuer] as AssistantMessage | undefined)?.toolCalls ?? [];
      expect(
        calls.some((c) => c.id === message.toolCallId),
        `${at}: tool message ${message.id} answers no call of the message before it`,
      ).toBe(true);
    }
  });
  if (finished) {
    expect(
      messages.filter((m) => m.role === "user"),
      `${at}: user messages`,
    ).toHaveLength(1);
    const last = messages.at(-1);
    expect(
      last?.role === "assistant" && !last.toolCalls?.length,
      `${at}: ends with the answer`,
    ).toBe(true);
  }
}

/** Each call of the assistant message at `index` is answered once (or not yet), as recorded. */
function checkAnswers(
  messages: readonly Message[],
  index: number,
  entries: Map<string, LedgerEntry>,
  at: string,
  finished: boolean,
): void {
  const issuer = messages[index] as AssistantMessage;
  let end = index + 1;
  while (messages[end]?.role === "tool") end += 1;
  const answers = messages.slice(index + 1, end);
  // Tool messages are written together, after the tool node: all of them, or none yet.
  const answered = answers.length > 0 || end < messages.length || finished;
  expect(answers.length, `${at}: answers to ${issuer.id}`).toBe(
    answered ? issuer.toolCalls!.length : 0,
  );
  for (const call of issuer.toolCalls!) {
    const mine = answers.filter((m) => m.role === "tool" && m.toolCallId === call.id);
    expect(mine.length, `${at}: answers to call ${call.id} of ${issuer.id}`).toBe(answered ? 1 : 0);
    if (mine.length === 0) continue;
    const key = keyOf(issuer, call);
    const entry = entries.get(key);
    expect(entry?.status, `${at}: ledger entry of answered call ${key}`).toBe("completed");
    // The answer is the recorded message itself (same id), whether it was replayed or not.
    const recorded = entry?.status === "completed" ? decodeEnvelope(entry.result, call.id) : null;
    expect(recorded?.message, `${at}: answer to ${key} vs the ledger`).toEqual(mine[0]);
  }
}

/**
 * The ledger key of a call: charge_card's domain key scoped by the tool's name, else
 * `<message id>:<call id>`.
 */
function keyOf(issuer: AssistantMessage, call: ToolCall): string {
  if (version1Name(call.name) === "charge_card") {
    const { order_id } = JSON.parse(call.arguments) as { order_id: string };
    return `charge_card:order-${order_id}-charge`;
  }
  return ledgerKey(issuer.id, call.id)!;
}
