import type { LedgerEntry } from "@tenxgraph/client";
import { useState } from "preact/hooks";
import { StatusBadge } from "./status-badge.js";
import { Transcript } from "./transcript.js";
import { useLoad } from "./use-load.js";

/**
 * One past version of the thread: its transcript and position, and a fork from it (a message,
 * or nothing to run on from that version's node). The fork becomes the thread's next version;
 * the versions after this one stay in the history.
 */
export function PastVersion(props: {
  threadId: string;
  version: number;
  links: Map<string, LedgerEntry>;
  running: boolean;
  onFork: (text: string) => void;
  onClose: () => void;
}) {
  const [text, setText] = useState("");
  const [loaded] = useLoad(
    (client, signal) => client.getState(props.threadId, { version: props.version, signal }),
    [props.threadId, props.version],
  );
  const fork = (event: Event) => {
    event.preventDefault();
    props.onFork(text.trim());
    setText("");
  };
  return (
    <section class="card past" data-panel="past-version">
      <div class="row">
        <h3>Version {props.version}</h3>
        {loaded.state === "ready" && loaded.value && (
          <>
            <StatusBadge status={loaded.value.execution_meta.internal_data.status} />
            <span class="muted">
              step {loaded.value.execution_meta.step}, at {loaded.value.execution_meta.current_node}
            </span>
          </>
        )}
        <button class="secondary" onClick={props.onClose}>
          Close
        </button>
      </div>
      {loaded.state === "loading" && <p class="muted">Loading version {props.version}…</p>}
      {loaded.state === "failed" && <p class="error">{loaded.message}</p>}
      {loaded.state === "ready" && loaded.value === null && (
        <p class="empty">This version is not kept any more.</p>
      )}
      {loaded.state === "ready" && loaded.value && (
        <Transcript messages={loaded.value.context} drafts={{}} links={props.links} />
      )}
      <form class="row composer" onSubmit={fork}>
        <input
          name="fork-message"
          placeholder="Message for the fork (empty: run on from this version)"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit" disabled={props.running || loaded.state !== "ready" || !loaded.value}>
          Fork from version {props.version}
        </button>
      </form>
    </section>
  );
}
