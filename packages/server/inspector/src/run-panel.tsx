import { useState } from "preact/hooks";
import type { RunActivity } from "./live-run.js";
import { StatusBadge } from "./status-badge.js";
import type { LiveRunControl } from "./use-live-run.js";

/** Send a message and watch the run: its steps and tool calls as they come, and a stop button. */
export function RunPanel(props: { run: LiveRunControl }) {
  const { run } = props;
  const [text, setText] = useState("");
  const send = (event: Event) => {
    event.preventDefault();
    const message = text.trim();
    if (message === "") return;
    setText("");
    void run.start(message);
  };
  return (
    <section class="card" data-panel="run">
      <form class="row composer" onSubmit={send}>
        <input
          name="message"
          placeholder="Message the agent"
          value={text}
          disabled={run.running}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit" disabled={run.running || text.trim() === ""}>
          Send
        </button>
        <button
          type="button"
          class="danger"
          disabled={!run.running}
          onClick={() => void run.stop()}
        >
          Stop
        </button>
      </form>
      {run.refused && <p class="error">{run.refused}</p>}
      {run.live && (
        <div class="live">
          <div class="row">
            <strong>Run</strong>
            <StatusBadge status={run.live.status} />
            {run.live.runId && <code class="muted small">{run.live.runId}</code>}
            {run.live.version !== null && <span class="muted">version {run.live.version}</span>}
          </div>
          {run.live.error && (
            <p class="error">
              The run failed ({run.live.error.code}): {run.live.error.reason}
            </p>
          )}
          <ol class="activity">
            {run.live.activity.map((a, i) => (
              <li key={i} class={`activity-${a.kind}`}>
                {activityText(a)}
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}

function activityText(a: RunActivity): string {
  switch (a.kind) {
    case "node":
      return `step ${a.step}: ${a.node}`;
    case "tool_started":
      return `${a.toolName} started (${a.key})`;
    case "tool_completed":
      return `${a.toolName} ${a.isError ? "failed" : "done"}${a.replayed ? ", replayed from the ledger" : ""}`;
    case "tool_in_doubt":
      return `${a.toolName} is in doubt (attempt ${a.attempt}, policy ${a.policy})`;
    case "state":
      return `saved version ${a.version} (${a.status}${a.node ? `, next ${a.node}` : ""})`;
  }
}
