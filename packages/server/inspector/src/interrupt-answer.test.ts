import { describe, expect, it } from "vitest";
import { answerForm, answerOf, isInDoubtQuestion, withInput } from "./interrupt-answer.js";

describe("answerForm", () => {
  it("shows an object's question and makes inputs of its other plain fields", () => {
    const form = answerForm({
      question: "Refund bob?",
      approved: false,
      amount_cents: 500,
      meta: {},
    });
    expect(form.prompt).toBe("Refund bob?");
    expect(form.fields).toEqual([
      { kind: "boolean", name: "approved", value: false },
      { kind: "number", name: "amount_cents", value: 500 },
    ]);
  });

  it("takes a string payload as the question, answered in free text", () => {
    expect(answerForm("Go ahead?")).toEqual({ prompt: "Go ahead?", fields: [] });
    expect(answerForm([1, 2])).toEqual({ prompt: null, fields: [] });
  });
});

it("answerOf is the object of the edited fields", () => {
  const [approved, amount] = answerForm({ approved: false, amount_cents: 500 }).fields;
  expect(answerOf([withInput(approved!, true), withInput(amount!, "300")])).toEqual({
    approved: true,
    amount_cents: 300,
  });
});

it("isInDoubtQuestion tells the in-doubt interrupt from others", () => {
  expect(isInDoubtQuestion({ kind: "tool_in_doubt", key: "k" })).toBe(true);
  expect(isInDoubtQuestion({ question: "?" })).toBe(false);
  expect(isInDoubtQuestion(null)).toBe(false);
});
