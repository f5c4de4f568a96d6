/** One input of an interrupt's answer form. */
export type AnswerField =
  | { kind: "boolean"; name: string; value: boolean }
  | { kind: "number"; name: string; value: number }
  | { kind: "text"; name: string; value: string };

/** The form for answering a payload: what it asks, and the fields the answer is made of. */
export interface AnswerForm {
  /** The payload's question, as text, when it has one. */
  prompt: string | null;
  /** Editable fields, prefilled from the payload; empty: the answer is free text. */
  fields: AnswerField[];
}

/** Payload fields that say what is asked rather than hold part of the answer. */
const PROMPT_FIELDS = new Set(["question", "message", "prompt", "title", "description"]);

/**
 * The form for an interrupt's payload. A string payload is the question. An object's
 * question-like fields (`question`, `message`, …) are shown; its other plain fields (booleans,
 * numbers, strings) become inputs holding their values, and the answer is that object edited.
 */
export function answerForm(payload: unknown): AnswerForm {
  if (typeof payload === "string") return { prompt: payload, fields: [] };
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    return { prompt: null, fields: [] };
  }
  const prompts: string[] = [];
  const fields: AnswerField[] = [];
  for (const [name, value] of Object.entries(payload)) {
    if (PROMPT_FIELDS.has(name) && typeof value === "string") prompts.push(value);
    else if (typeof value === "boolean") fields.push({ kind: "boolean", name, value });
    else if (typeof value === "number") fields.push({ kind: "number", name, value });
    else if (typeof value === "string") fields.push({ kind: "text", name, value });
  }
  return { prompt: prompts.length > 0 ? prompts.join("\n") : null, fields };
}

/** The answer the form's fields make: an object of their values. */
export function answerOf(fields: readonly AnswerField[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((f) => [f.name, f.value]));
}

/** A field with a new value read from its input (a number input's text is parsed). */
export function withInput(field: AnswerField, input: string | boolean): AnswerField {
  switch (field.kind) {
    case "boolean":
      return { ...field, value: input === true };
    case "number":
      return { ...field, value: Number(input) };
    case "text":
      return { ...field, value: String(input) };
  }
}

/** Interrupts that ask whether a tool call happened: the in-doubt panel decides those. */
export function isInDoubtQuestion(payload: unknown): boolean {
  return (
    typeof payload === "object" &&
    payload !== null &&
    (payload as { kind?: unknown }).kind === "tool_in_doubt"
  );
}
