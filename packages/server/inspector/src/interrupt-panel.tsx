import type { Interrupt } from "@tenxgraph/client";
import { useState } from "preact/hooks";
import { clockTime, pretty } from "./format.js";
import { answerForm, answerOf, withInput, type AnswerField } from "./interrupt-answer.js";

/** The thread's pending interrupts, each with an answer form built from what it asks. */
export function InterruptPanel(props: {
  interrupts: Interrupt[];
  running: boolean;
  onAnswer: (interruptId: string, answer: unknown) => void;
}) {
  if (props.interrupts.length === 0) return null;
  return (
    <section class="card attention" data-panel="interrupts">
      <h3>Waiting for an answer</h3>
      {props.interrupts.map((i) => (
        <InterruptForm key={i.id} interrupt={i} running={props.running} onAnswer={props.onAnswer} />
      ))}
    </section>
  );
}

function InterruptForm(props: {
  interrupt: Interrupt;
  running: boolean;
  onAnswer: (interruptId: string, answer: unknown) => void;
}) {
  const { interrupt } = props;
  const form = answerForm(interrupt.value);
  const [fields, setFields] = useState<AnswerField[]>(form.fields);
  const [text, setText] = useState("");
  const setField = (index: number, input: string | boolean) =>
    setFields(fields.map((f, i) => (i === index ? withInput(f, input) : f)));
  const submit = (event: Event) => {
    event.preventDefault();
    props.onAnswer(interrupt.id, fields.length > 0 ? answerOf(fields) : text);
  };
  return (
    <form class="interrupt" data-interrupt={interrupt.id} onSubmit={submit}>
      <p class="muted small">
        {interrupt.node}
        {interrupt.toolCallId ? `, tool call ${interrupt.toolCallId}` : ""}, id{" "}
        <code>{interrupt.id}</code>
      </p>
      {interrupt.message && <p>{interrupt.message}</p>}
      {interrupt.resumeAt && (
        <p class="small" data-wake={interrupt.resumeAt}>
          A timer resumes it at{" "}
          <time dateTime={interrupt.resumeAt}>{clockTime(interrupt.resumeAt)}</time> unless answered
          before.
        </p>
      )}
      {form.prompt && <p class="prompt">{form.prompt}</p>}
      {!form.prompt && form.fields.length === 0 && (
        <pre class="args">{pretty(interrupt.value)}</pre>
      )}
      {fields.map((field, index) => (
        <FieldInput key={field.name} field={field} onInput={(v) => setField(index, v)} />
      ))}
      {fields.length === 0 && (
        <input
          name="answer"
          placeholder="Your answer"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      )}
      <div class="actions">
        <button type="submit" disabled={props.running}>
          Answer and continue
        </button>
      </div>
    </form>
  );
}

function FieldInput(props: { field: AnswerField; onInput: (value: string | boolean) => void }) {
  const { field } = props;
  if (field.kind === "boolean") {
    return (
      <label class="field">
        <input
          type="checkbox"
          name={field.name}
          checked={field.value}
          onChange={(e) => props.onInput(e.currentTarget.checked)}
        />
        {field.name}
      </label>
    );
  }
  const onInput = (e: { currentTarget: HTMLInputElement }) => props.onInput(e.currentTarget.value);
  return (
    <label class="field">
      {field.name}
      {field.kind === "number" ? (
        <input type="number" name={field.name} value={field.value} onInput={onInput} />
      ) : (
        <input type="text" name={field.name} value={field.value} onInput={onInput} />
      )}
    </label>
  );
}
