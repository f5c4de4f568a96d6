import type { InDoubtCall, InDoubtDecision } from "@tenxgraph/client";
import { useState } from "preact/hooks";
import { explain } from "./connection.js";
import { pretty } from "./format.js";
import { useInspector } from "./inspector-context.js";

/**
 * Calls that started and were never recorded: they may or may not have happened. A call whose
 * tool asks a human (`decidable`) gets a decision form; the others are decided by their tool's
 * policy once the run continues.
 */
export function InDoubtPanel(props: {
  threadId: string;
  calls: InDoubtCall[];
  running: boolean;
  onContinue: () => void;
  onDecided: () => void;
}) {
  if (props.calls.length === 0) return null;
  const waiting = props.calls.filter((c) => !c.decidable);
  return (
    <section class="card attention" data-panel="in-doubt">
      <h3>Tool calls in doubt</h3>
      {props.calls
        .filter((c) => c.decidable)
        .map((call) => (
          <Decision
            key={call.key}
            threadId={props.threadId}
            call={call}
            onDecided={props.onDecided}
          />
        ))}
      {waiting.map((call) => (
        <div key={call.key} class="in-doubt-call" data-key={call.key}>
          <p>
            <code>{call.tool_name}</code> (attempt {call.attempt}) started and was never recorded.{" "}
            {leaseText(call.lease_expires_in_ms)}
          </p>
          <p class="muted small">
            key <code>{call.key}</code>
          </p>
        </div>
      ))}
      {waiting.length > 0 && (
        <div class="actions">
          <button disabled={props.running} onClick={props.onContinue}>
            Continue the run
          </button>
          <span class="muted small">
            The run picks up where it stopped; each call's tool policy decides it (retry, fail, or
            ask you here).
          </span>
        </div>
      )}
    </section>
  );
}

function leaseText(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  if (ms > 0) return `A run still holds it: its lease runs ${Math.ceil(ms / 1000)} s more.`;
  return `Its run is gone: the lease expired ${Math.round(-ms / 1000)} s ago.`;
}

type Choice = InDoubtDecision["action"];

/** The three decisions, as the form offers them. */
const CHOICES: [Choice, string][] = [
  ["complete", "It happened: record this result"],
  ["retry", "It did not happen: run it again"],
  ["fail", "Mark it failed (the model is told)"],
];

/** The decision on one call: retry it, mark it failed, or record the result checked by hand. */
function Decision(props: { threadId: string; call: InDoubtCall; onDecided: () => void }) {
  const { client } = useInspector();
  const [choice, setChoice] = useState<Choice>("complete");
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setSending(true);
    setError(null);
    try {
      await client.decideInDoubt(props.threadId, props.call.key, decisionOf(choice, text));
      props.onDecided();
    } catch (e) {
      setError(explain(e));
    } finally {
      setSending(false);
    }
  };
  return (
    <form class="in-doubt-call" data-key={props.call.key} onSubmit={submit}>
      <p>
        Did <code>{props.call.tool_name}</code> happen? The run that made this call died before
        recording it. Check with the system it talks to (a payment provider's dashboard, say), then
        decide.
      </p>
      <pre class="args">{pretty(props.call.arguments)}</pre>
      <p class="muted small">
        idempotency key <code>{props.call.key}</code>, attempt {props.call.attempt}
      </p>
      <fieldset>
        {CHOICES.map(([value, label]) => (
          <label key={value}>
            <input
              type="radio"
              name={`choice-${props.call.key}`}
              value={value}
              checked={choice === value}
              onChange={() => setChoice(value)}
            />
            {label}
          </label>
        ))}
      </fieldset>
      {choice !== "retry" && (
        <textarea
          name="decision-text"
          rows={2}
          placeholder={
            choice === "complete" ? "The result, e.g. Charged 42.00 USD" : "Why it failed"
          }
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      )}
      <div class="actions">
        <button type="submit" disabled={sending || (choice === "complete" && text.trim() === "")}>
          {sending ? "Deciding…" : "Decide and continue"}
        </button>
      </div>
      {error && <p class="error">{error}</p>}
    </form>
  );
}

/** The decision the form says; a result that parses as JSON is sent as that value. */
function decisionOf(choice: Choice, text: string): InDoubtDecision {
  switch (choice) {
    case "retry":
      return { action: "retry" };
    case "fail":
      return text.trim() ? { action: "fail", reason: text.trim() } : { action: "fail" };
    case "complete":
      return { action: "complete", result: parseLoose(text.trim()) };
  }
}

function parseLoose(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
