import { isClientError, type TenxgraphClient, type ThreadInfo } from "@tenxgraph/client";
import { useState } from "preact/hooks";
import { clockTime } from "./format.js";
import { followLink, hrefOf, navigate } from "./router.js";
import { StatusBadge } from "./status-badge.js";
import { useLoad } from "./use-load.js";

const PAGE_SIZE = 20;

/** A thread on the list, with how many of its tool calls are in doubt. */
interface ListedThread {
  thread: ThreadInfo;
  inDoubt: number;
}

/** The caller's threads, newest first, with badges, search and paging. */
export function ThreadList() {
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(0);
  const [loaded, reload] = useLoad(
    (client, signal) => listPage(client, { search, offset: page * PAGE_SIZE, signal }),
    [search, page],
  );
  return (
    <section class="card">
      <div class="row">
        <h2>Threads</h2>
        <input
          type="search"
          name="search"
          placeholder="Search by id or name"
          value={search}
          onInput={(e) => {
            setSearch(e.currentTarget.value);
            setPage(0);
          }}
        />
        <button class="secondary" onClick={reload}>
          Refresh
        </button>
      </div>
      {loaded.state === "loading" && <p class="muted">Loading threads…</p>}
      {loaded.state === "failed" && <p class="error">{loaded.message}</p>}
      {loaded.state === "ready" && loaded.value.length === 0 && (
        <p class="empty">
          {search
            ? `No thread of yours matches “${search}”.`
            : page > 0
              ? "No more threads."
              : "No threads yet. Start one from your app, or open a thread id below."}
        </p>
      )}
      {loaded.state === "ready" && loaded.value.length > 0 && <ThreadTable rows={loaded.value} />}
      <div class="row">
        <button class="secondary" disabled={page === 0} onClick={() => setPage(page - 1)}>
          Newer
        </button>
        <span class="muted">Page {page + 1}</span>
        <button
          class="secondary"
          disabled={loaded.state !== "ready" || loaded.value.length < PAGE_SIZE}
          onClick={() => setPage(page + 1)}
        >
          Older
        </button>
      </div>
      <NewThread />
    </section>
  );
}

function ThreadTable(props: { rows: ListedThread[] }) {
  return (
    <table class="threads">
      <thead>
        <tr>
          <th>Thread</th>
          <th>Status</th>
          <th>Last update</th>
          <th>Version</th>
          <th>Needs attention</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map(({ thread, inDoubt }) => (
          <tr key={thread.thread_id} data-thread={thread.thread_id}>
            <td>
              <a href={hrefOf({ view: "thread", threadId: thread.thread_id })} onClick={followLink}>
                {thread.thread_name ?? thread.thread_id}
              </a>
              {thread.thread_name && <div class="muted small">{thread.thread_id}</div>}
            </td>
            <td>
              <StatusBadge status={thread.metadata.status} />
            </td>
            <td>{clockTime(thread.updated_at)}</td>
            <td>{thread.metadata.version}</td>
            <td>
              {thread.metadata.status === "interrupted" && (
                <span class="badge warn">interrupt pending</span>
              )}
              {inDoubt > 0 && <span class="badge danger">{inDoubt} in doubt</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Opens a thread by id, new or not: the first message sent there creates it. */
function NewThread() {
  const [id, setId] = useState("");
  return (
    <form
      class="row"
      onSubmit={(e) => {
        e.preventDefault();
        navigate(
          hrefOf({ view: "thread", threadId: id.trim() || `thread-${Date.now().toString(36)}` }),
        );
      }}
    >
      <input
        name="new-thread"
        placeholder="Thread id (empty: a new one)"
        value={id}
        onInput={(e) => setId(e.currentTarget.value)}
      />
      <button type="submit">Open thread</button>
    </form>
  );
}

/**
 * A page of threads with each one's in-doubt count. Only threads a run left unfinished can
 * hold a call that started and was never recorded, so completed ones are not asked.
 */
async function listPage(
  client: TenxgraphClient,
  options: { search: string; offset: number; signal: AbortSignal },
): Promise<ListedThread[]> {
  const threads = await client.listThreads({
    ...(options.search ? { search: options.search } : {}),
    offset: options.offset,
    limit: PAGE_SIZE,
    signal: options.signal,
  });
  return Promise.all(
    threads.map(async (thread) => ({
      thread,
      inDoubt:
        thread.metadata.status === "completed"
          ? 0
          : await inDoubtCount(client, thread.thread_id, options.signal),
    })),
  );
}

/** How many calls of the thread are in doubt; 0 for a thread deleted since it was listed. */
async function inDoubtCount(
  client: TenxgraphClient,
  threadId: string,
  signal: AbortSignal,
): Promise<number> {
  try {
    return (await client.listInDoubt(threadId, { signal })).length;
  } catch (error) {
    if (isClientError(error) && error.status === 404) return 0;
    throw error;
  }
}
