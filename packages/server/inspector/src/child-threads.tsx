import type { ThreadInfo } from "@tenxgraph/client";
import { clockTime } from "./format.js";
import { followLink, hrefOf } from "./router.js";
import { StatusBadge } from "./status-badge.js";

/**
 * The threads the thread's subgraph nodes ran on, each a link to its own page (its transcript
 * and ledger live there, not in the parent's). Nothing when the thread has none.
 */
export function ChildThreads(props: { threads: ThreadInfo[] }) {
  if (props.threads.length === 0) return null;
  return (
    <section class="card" data-panel="child-threads">
      <h3>Subgraph threads</h3>
      <table class="threads">
        <thead>
          <tr>
            <th>Thread</th>
            <th>Status</th>
            <th>Last update</th>
            <th>Version</th>
          </tr>
        </thead>
        <tbody>
          {props.threads.map((thread) => (
            <tr key={thread.thread_id} data-child-thread={thread.thread_id}>
              <td>
                <a
                  href={hrefOf({ view: "thread", threadId: thread.thread_id })}
                  onClick={followLink}
                >
                  {thread.thread_name ?? thread.thread_id}
                </a>
              </td>
              <td>
                <StatusBadge status={thread.metadata.status} />
              </td>
              <td>{clockTime(thread.updated_at)}</td>
              <td>{thread.metadata.version}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
