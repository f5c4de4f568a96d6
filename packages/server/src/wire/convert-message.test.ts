import { Message } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { fromWireMessage, toWireMessage } from "./convert-message.js";
import { wireMessageSchema } from "./wire-message.js";

describe("wire messages", () => {
  it("mints an id for placeholder ids and keeps a given one", () => {
    const minted = fromWireMessage({ role: "user", content: "hi", message_id: "0" }, 0);
    expect(minted.id).not.toBe("0");
    expect(minted.id.length).toBeGreaterThan(10);
    const kept = fromWireMessage({ role: "user", content: "hi", message_id: "m-1" }, 0);
    expect(kept).toMatchObject({ id: "m-1", role: "user" });
  });

  it("reads an assistant's tool calls, arguments as a JSON string", () => {
    const message = fromWireMessage(
      {
        role: "assistant",
        content: [],
        message_id: "a1",
        tools_calls: [{ id: "c1", function: { name: "charge", arguments: { order: "7" } } }],
      },
      0,
    );
    expect(message).toMatchObject({
      toolCalls: [{ id: "c1", name: "charge", arguments: '{"order":"7"}' }],
    });
  });

  it("refuses a tool message without a call id (422 naming the message)", () => {
    expect(() => fromWireMessage({ role: "tool", content: "done" }, 2)).toThrow(
      expect.objectContaining({ status: 422, code: "VALIDATION_ERROR" }),
    );
  });

  it("round-trips a user message's text and id through the request schema", () => {
    const message = Message.user("hello");
    const wire = toWireMessage(message);
    expect(wire).toMatchObject({ message_id: message.id, role: "user", delta: false });
    expect(wire.content).toEqual([{ type: "text", text: "hello", annotations: [] }]);
    expect(fromWireMessage(wireMessageSchema.parse(wire), 0)).toMatchObject({
      id: message.id,
      content: "hello",
    });
  });
});
