import type { StateHistoryEntry } from "@tenxgraph/client";
import { useState } from "preact/hooks";
import { isMissingRoute } from "./connection.js";
import { clockTime } from "./format.js";
import { useInspector } from "./inspector-context.js";
import { traceHref } from "./trace-link.js";
import { StatusBadge } from "./status-badge.js";
import { useLoad } from "./use-load.js";
import { describeChanges, versionChanges } from "./version-changes.js";

const PAGE_SIZE = 20;

/**
 * The thread's versions, newest first, one row per write: the node that wrote it, when, where
 * the thread stood next, and what changed. A row opens that version. Reads again whenever the
 * thread's `version` moves.
 */
export function Timeline(props: {
  threadId: string;
  version: number;
  selected: number | null;
  onSelect: (version: number) => void;
}) {
  const [before, setBefore] = useState<number | undefined>(undefined);
  const [loaded] = useLoad(
    (client, signal) =>
      // One more than shown: the last row's parent, to say what that row changed.
      client.getStateHistory(props.threadId, {
        limit: PAGE_SIZE + 1,
        ...(before === undefined ? {} : { before }),
        signal,
      }),
    [props.threadId, props.version, before],
  );
  if (loaded.state === "loading") return <p class="muted">Loading the versions…</p>;
  if (loaded.state === "failed") {
    return isMissingRoute(loaded.error) ? (
      <p class="empty">History is not available on this server.</p>
    ) : (
      <p class="error">{loaded.message}</p>
    );
  }
  const fetched = loaded.value;
  const versions = fetched.slice(0, PAGE_SIZE);
  if (versions.length === 0) {
    return <p class="empty">No versions kept (the history was pruned or starts later).</p>;
  }
  return (
    <>
      <table class="timeline">
        <thead>
          <tr>
            <th>Version</th>
            <th>Written</th>
            <th>By</th>
            <th>Then</th>
            <th>What changed</th>
            <th>Trace</th>
          </tr>
        </thead>
        <tbody>
          {versions.map((v) => (
            <TimelineRow
              key={v.version}
              version={v}
              changes={changesOf(v, fetched)}
              selected={v.version === props.selected}
              onSelect={props.onSelect}
            />
          ))}
        </tbody>
      </table>
      <div class="row">
        <button
          class="secondary"
          disabled={before === undefined}
          onClick={() => setBefore(undefined)}
        >
          Newest
        </button>
        <button
          class="secondary"
          disabled={fetched.length <= PAGE_SIZE}
          onClick={() => setBefore(versions.at(-1)!.version)}
        >
          Older
        </button>
      </div>
    </>
  );
}

/** One version: open it, when it was written, by which node, where it stood, what changed. */
function TimelineRow(props: {
  version: StateHistoryEntry;
  changes: string;
  selected: boolean;
  onSelect: (version: number) => void;
}) {
  const v = props.version;
  const forked = v.parent_version !== null && v.parent_version !== v.version - 1;
  return (
    <tr data-version={v.version} class={props.selected ? "selected" : ""}>
      <td>
        <button class="link" onClick={() => props.onSelect(v.version)}>
          v{v.version}
        </button>
        {forked && (
          <span class="badge warn" title="Forked from an earlier version">
            from v{v.parent_version}
          </span>
        )}
      </td>
      <td>{clockTime(v.created_at)}</td>
      <td>{v.node ?? <span class="muted">input or edit</span>}</td>
      <td>
        <StatusBadge status={v.status} /> {v.next_node ?? ""}
      </td>
      <td>{props.changes}</td>
      <td>{v.trace_id && <TraceId traceId={v.trace_id} />}</td>
    </tr>
  );
}

/** The trace of the run that wrote a version: a link with a configured `--trace-url`, else text. */
function TraceId(props: { traceId: string }) {
  const href = traceHref(useInspector().settings.traceUrl, props.traceId);
  const short = <code class="small">{props.traceId.slice(0, 8)}…</code>;
  return href === null ? (
    <span title={props.traceId}>{short}</span>
  ) : (
    <a href={href} target="_blank" rel="noopener noreferrer" title={props.traceId}>
      {short}
    </a>
  );
}

/**
 * What `v` changed from the version it was made from; "—" when that version is not among
 * `versions` (a fork of a version further back).
 */
function changesOf(v: StateHistoryEntry, versions: readonly StateHistoryEntry[]): string {
  if (v.parent_version === null) return describeChanges(versionChanges(v, undefined));
  const parent = versions.find((other) => other.version === v.parent_version);
  return parent ? describeChanges(versionChanges(v, parent)) : "—";
}
