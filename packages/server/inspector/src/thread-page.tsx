import type { GraphInfo, LedgerEntry, WireMessage } from "@tenxgraph/client";
import { useEffect, useState } from "preact/hooks";
import { ChildThreads } from "./child-threads.js";
import { GraphPicture } from "./graph-picture.js";
import { InDoubtPanel } from "./in-doubt-panel.js";
import { isInDoubtQuestion } from "./interrupt-answer.js";
import { InterruptPanel } from "./interrupt-panel.js";
import { LedgerTable } from "./ledger-table.js";
import { linkCalls, transcriptCalls } from "./ledger-links.js";
import { PastVersion } from "./past-version.js";
import { readThread, type ThreadData } from "./read-thread.js";
import { followLink, hrefOf } from "./router.js";
import { RunPanel } from "./run-panel.js";
import { StatusBadge } from "./status-badge.js";
import { Timeline } from "./timeline.js";
import { Transcript } from "./transcript.js";
import { useLiveRun, type LiveRunControl } from "./use-live-run.js";
import { useLoad, type Loaded } from "./use-load.js";

/** How often a thread running elsewhere (your app, a worker) is read again. */
const FOLLOW_MS = 2000;

/**
 * One thread: its transcript, live runs and versions on the left; what waits for a person, its
 * ledger and its graph on the right.
 */
export function ThreadPage(props: { threadId: string }) {
  const { threadId } = props;
  const [loaded, reload] = useLoad(
    (client, signal) => readThread(client, threadId, signal),
    [threadId],
  );
  const [graph] = useLoad((client, signal) => client.getGraph({ signal }), []);
  const run = useLiveRun(threadId, reload);
  const stored = loaded.state === "ready" ? loaded.value.state?.execution_meta : undefined;
  useFollow(stored?.internal_data.status === "running" && !run.running, reload);
  if (loaded.state === "loading") return <p class="card muted">Loading thread {threadId}…</p>;
  if (loaded.state === "failed") {
    return (
      <section class="card">
        <h2>{threadId}</h2>
        <p class="error">{loaded.message}</p>
        <a href={hrefOf({ view: "threads" })} onClick={followLink}>
          Back to your threads
        </a>
      </section>
    );
  }
  const data = loaded.value;
  const messages = withLive(data.state?.context ?? [], run.live?.messages ?? []);
  const links = linkCalls(transcriptCalls(messages), data.ledger);
  return (
    <div class="thread">
      <ThreadHead threadId={threadId} data={data} run={run} reload={reload} />
      <div class="columns">
        <div class="column">
          <Conversation
            threadId={threadId}
            data={data}
            run={run}
            messages={messages}
            links={links}
          />
        </div>
        <div class="column">
          <OperatorPanels threadId={threadId} data={data} run={run} graph={graph} reload={reload} />
        </div>
      </div>
    </div>
  );
}

/** The thread's name, status, version and position, with refresh and continue. */
function ThreadHead(props: {
  threadId: string;
  data: ThreadData;
  run: LiveRunControl;
  reload: () => void;
}) {
  const { data, run } = props;
  const meta = data.state?.execution_meta;
  const status = run.running ? "running" : (meta?.internal_data.status ?? "new");
  return (
    <section class="card thread-head">
      <div class="row">
        <h2>{data.name ?? props.threadId}</h2>
        <StatusBadge status={status} />
        {meta && <span class="muted">version {meta.internal_data.version}</span>}
        {meta && (
          <span class="muted">
            step {meta.step}, at {meta.current_node}
          </span>
        )}
        <button class="secondary" onClick={props.reload}>
          Refresh
        </button>
        {/* With calls in doubt, their panel offers to continue, saying what it will do. */}
        {(status === "stopped" || status === "failed") &&
          data.inDoubt.length === 0 &&
          !runsThroughParent(data) && (
            <button onClick={() => void run.start({ continue: true })}>Continue the run</button>
          )}
      </div>
      {data.parentThreadId !== null && (
        <p data-parent-thread={data.parentThreadId}>
          A subgraph's thread, run for{" "}
          <a href={hrefOf({ view: "thread", threadId: data.parentThreadId })} onClick={followLink}>
            {data.parentThreadId}
          </a>
          : it runs, and its questions are answered, only through its parent.
        </p>
      )}
      {!data.state && <p class="empty">A new thread: the first message you send creates it.</p>}
    </section>
  );
}

/** The transcript, the composer and live run, the versions and a past one to fork from. */
function Conversation(props: {
  threadId: string;
  data: ThreadData;
  run: LiveRunControl;
  messages: WireMessage[];
  links: Map<string, LedgerEntry>;
}) {
  const { threadId, run } = props;
  const [selected, setSelected] = useState<number | null>(null);
  const meta = props.data.state?.execution_meta;
  const fork = (version: number, text: string) => {
    setSelected(null);
    void run.start(text === "" ? { continue: true } : text, { fromVersion: version });
  };
  return (
    <>
      <section class="card" data-panel="transcript">
        <h3>Transcript</h3>
        <Transcript messages={props.messages} drafts={run.live?.drafts ?? {}} links={props.links} />
      </section>
      {!runsThroughParent(props.data) && <RunPanel run={run} />}
      {selected !== null && (
        <PastVersion
          threadId={threadId}
          version={selected}
          links={props.links}
          // A subgraph's thread is not forked on its own: it runs through its parent.
          running={run.running || runsThroughParent(props.data)}
          onClose={() => setSelected(null)}
          onFork={(text) => fork(selected, text)}
        />
      )}
      {meta && (
        <section class="card" data-panel="timeline">
          <h3>Versions</h3>
          <Timeline
            threadId={threadId}
            version={meta.internal_data.version}
            selected={selected}
            onSelect={setSelected}
          />
        </section>
      )}
    </>
  );
}

/** What waits for a person (interrupts, calls in doubt), the ledger and the graph. */
function OperatorPanels(props: {
  threadId: string;
  data: ThreadData;
  run: LiveRunControl;
  graph: Loaded<GraphInfo>;
  reload: () => void;
}) {
  const { data, run, graph } = props;
  const meta = data.state?.execution_meta;
  // While a run streams, what it waits for is not known yet: the panels come back when it ends.
  // A subgraph's questions are the parent's too, answered on the parent's page.
  const interrupts =
    run.running || runsThroughParent(data)
      ? []
      : (meta?.internal_data.interrupts ?? []).filter((i) => !isInDoubtQuestion(i.value));
  return (
    <>
      <InterruptPanel
        interrupts={interrupts}
        running={run.running}
        onAnswer={(interruptId, answer) => void run.start({ resume: answer, interruptId })}
      />
      <InDoubtPanel
        threadId={props.threadId}
        calls={run.running || runsThroughParent(data) ? [] : data.inDoubt}
        running={run.running}
        onContinue={() => void run.start({ continue: true })}
        onDecided={props.reload}
      />
      <section class="card" data-panel="ledger">
        <h3>Tool ledger</h3>
        <LedgerTable
          entries={data.ledger}
          replayed={run.live?.replayed ?? {}}
          inDoubtKeys={new Set(data.inDoubt.map((c) => c.key))}
        />
      </section>
      <ChildThreads threads={data.children} />
      {/* The served graph is the parent's: a subgraph's thread runs another. */}
      {!runsThroughParent(data) && (
        <section class="card" data-panel="graph">
          <h3>Graph</h3>
          {graph.state === "ready" && (
            <GraphPicture graph={graph.value} current={meta?.current_node} />
          )}
          {graph.state === "failed" && <p class="error">{graph.message}</p>}
        </section>
      )}
    </>
  );
}

/** A subgraph's thread: it runs, and its interrupts are answered, only through its parent. */
function runsThroughParent(data: ThreadData): boolean {
  return data.parentThreadId !== null;
}

/** Reads the thread again every {@link FOLLOW_MS} while `following`: a run this page did not start. */
function useFollow(following: boolean, reload: () => void): void {
  useEffect(() => {
    if (!following) return;
    const timer = setInterval(reload, FOLLOW_MS);
    return () => clearInterval(timer);
  }, [following, reload]);
}

/** The stored transcript, then the messages the live run sent that it does not hold yet. */
function withLive(stored: WireMessage[], live: WireMessage[]): WireMessage[] {
  const known = new Set(stored.map((m) => m.message_id));
  return [...stored, ...live.filter((m) => !known.has(m.message_id))];
}
