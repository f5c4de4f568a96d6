import type { LedgerEntry } from "@tenxgraph/client";
import { clockTime, duration } from "./format.js";
import { failureOf, ledgerRowId } from "./ledger-links.js";

/**
 * The thread's tool ledger: one row per call claimed. "Replayed" is known for the calls the
 * page saw finish in a stream (the ledger itself does not count replays).
 */
export function LedgerTable(props: {
  entries: LedgerEntry[];
  replayed: Record<string, boolean>;
  inDoubtKeys: Set<string>;
}) {
  if (props.entries.length === 0) {
    return <p class="empty">No tool calls on this thread yet.</p>;
  }
  return (
    <div class="table-wrap">
      <table class="ledger">
        <thead>
          <tr>
            <th>Tool</th>
            <th>Status</th>
            <th>Attempts</th>
            <th>Idempotency key</th>
            <th>Started</th>
            <th>Duration</th>
            <th>Last run</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {props.entries.map((entry) => (
            <LedgerRow
              key={entry.key}
              entry={entry}
              replayed={props.replayed[entry.key]}
              inDoubt={props.inDoubtKeys.has(entry.key)}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function LedgerRow(props: { entry: LedgerEntry; replayed: boolean | undefined; inDoubt: boolean }) {
  const { entry } = props;
  const failure = failureOf(entry);
  return (
    <tr id={ledgerRowId(entry.key)} data-key={entry.key} class={props.inDoubt ? "in-doubt" : ""}>
      <td>{entry.tool_name}</td>
      <td>
        <span class={`badge ledger-${entry.status}`}>{entry.status}</span>
        {props.inDoubt && <span class="badge danger">in doubt</span>}
      </td>
      <td>{entry.attempt}</td>
      <td>
        <code class="key">{entry.key}</code>
      </td>
      <td>{clockTime(entry.started_at)}</td>
      <td>{duration(entry.started_at, entry.completed_at)}</td>
      <td>
        {props.replayed === undefined ? (
          <span class="muted">—</span>
        ) : props.replayed ? (
          <span class="badge">replayed</span>
        ) : (
          <span class="badge ok">ran</span>
        )}
      </td>
      <td>{failure === null ? "" : failure || "failed"}</td>
    </tr>
  );
}
