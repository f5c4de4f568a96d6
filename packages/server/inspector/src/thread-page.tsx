import type { TenxgraphClient, WireMessage } from "@tenxgraph/client";
import { isClientError } from "@tenxgraph/client";
import { useEffect, useState } from "preact/hooks";
import { GraphPicture } from "./graph-picture.js";
import { InDoubtPanel } from "./in-doubt-panel.js";
import { isInDoubtQuestion } from "./interrupt-answer.js";
import { InterruptPanel } from "./interrupt-panel.js";
import { LedgerTable } from "./ledger-table.js";
import { PastVersion } from "./past-version.js";
import { linkCalls, transcriptCalls } from "./ledger-links.js";
import { followLink, hrefOf } from "./router.js";
import { RunPanel } from "./run-panel.js";
import { StatusBadge } from "./status-badge.js";
import { Timeline } from "./timeline.js";
import { Transcript } from "./transcript.js";
import { useLiveRun } from "./use-live-run.js";
import { useLoad } from "./use-load.js";

/** One thread: its transcript, live runs, what waits for a person, its ledger and its graph. */
export function ThreadPage(props: { threadId: string }) {
  const { threadId } = props;
  const [loaded, reload] = useLoad(
    (client, signal) => readThread(client, threadId, signal),
    [threadId],
  );
  const [graph] = useLoad((client, signal) => client.getGraph({ signal }), []);
  const run = useLiveRun(threadId, reload);
  const [selected, setSelected] = useState<number | null>(null);
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
  const { state, ledger, inDoubt } = loaded.value;
  const meta = state?.execution_meta;
  const messages = withLive(state?.context ?? [], run.live?.messages ?? []);
  const links = linkCalls(transcriptCalls(messages), ledger);
  const interrupts = run.running
    ? []
    : (meta?.internal_data.interrupts ?? []).filter((i) => !isInDoubtQuestion(i.value));
  const status = run.running ? "running" : (meta?.internal_data.status ?? "new");
  return (
    <div class="thread">
      <section class="card thread-head">
        <div class="row">
          <h2>{loaded.value.name ?? threadId}</h2>
          <StatusBadge status={status} />
          {meta && <span class="muted">version {meta.internal_data.version}</span>}
          {meta && (
            <span class="muted">
              step {meta.step}, at {meta.current_node}
            </span>
          )}
          <button class="secondary" onClick={reload}>
            Refresh
          </button>
          {/* With calls in doubt, their panel offers to continue, saying what it will do. */}
          {(status === "stopped" || status === "failed") && inDoubt.length === 0 && (
            <button onClick={() => void run.start({ continue: true })}>Continue the run</button>
          )}
        </div>
        {!state && <p class="empty">A new thread: the first message you send creates it.</p>}
      </section>
      <div class="columns">
        <div class="column">
          <section class="card" data-panel="transcript">
            <h3>Transcript</h3>
            <Transcript messages={messages} drafts={run.live?.drafts ?? {}} links={links} />
          </section>
          <RunPanel run={run} />
          {selected !== null && (
            <PastVersion
              threadId={threadId}
              version={selected}
              links={links}
              running={run.running}
              onClose={() => setSelected(null)}
              onFork={(text) => {
                setSelected(null);
                void run.start(text === "" ? { continue: true } : text, { fromVersion: selected });
              }}
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
        </div>
        <div class="column">
          <InterruptPanel
            interrupts={interrupts}
            running={run.running}
            onAnswer={(interruptId, answer) => void run.start({ resume: answer, interruptId })}
          />
          <InDoubtPanel
            threadId={threadId}
            calls={run.running ? [] : inDoubt}
            running={run.running}
            onContinue={() => void run.start({ continue: true })}
            onDecided={reload}
          />
          <section class="card" data-panel="ledger">
            <h3>Tool ledger</h3>
            <LedgerTable
              entries={ledger}
              replayed={run.live?.replayed ?? {}}
              inDoubtKeys={new Set(inDoubt.map((c) => c.key))}
            />
          </section>
          <section class="card" data-panel="graph">
            <h3>Graph</h3>
            {graph.state === "ready" && (
              <GraphPicture graph={graph.value} current={meta?.current_node} />
            )}
            {graph.state === "failed" && <p class="error">{graph.message}</p>}
          </section>
        </div>
      </div>
    </div>
  );
}

/** How often a thread running elsewhere (your app, a worker) is read again. */
const FOLLOW_MS = 2000;

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

/**
 * Everything the page shows of a thread, read together. A thread nobody wrote to yet has no
 * state; its ledger and in-doubt routes answer 404, which here means "nothing yet".
 */
async function readThread(client: TenxgraphClient, threadId: string, signal: AbortSignal) {
  const thread = await client.getThread(threadId, { signal });
  if (thread === null) return { name: null, state: null, ledger: [], inDoubt: [] };
  const [state, ledger, inDoubt] = await Promise.all([
    client.getState(threadId, { signal }),
    client.getLedger(threadId, { signal }).catch(emptyWhenMissing),
    client.listInDoubt(threadId, { signal }).catch(emptyWhenMissing),
  ]);
  return { name: thread.thread_name, state, ledger, inDoubt };
}

function emptyWhenMissing(error: unknown): never[] {
  if (isClientError(error) && error.status === 404) return [];
  throw error;
}
