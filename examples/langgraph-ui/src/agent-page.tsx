import type { Message } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { useState, type FormEvent } from "react";

/** The thread this tab talks on, kept across reloads (the run to rejoin is kept by useStream). */
const THREAD_KEY = "langgraph-ui:thread";

function textOf(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((part) => ("text" in part ? part.text : "")).join("");
}

/**
 * LangGraph's `useStream` against `tenxgraph api`, unchanged: the words stream in, a refund asks
 * first (an interrupt: Approve resumes it), and with `reconnectOnMount` a reload mid-run rejoins
 * the run by the id `useStream` kept (the run is queued, so its events are stored).
 */
export function AgentPage() {
  const [threadId, setThreadId] = useState(() => sessionStorage.getItem(THREAD_KEY));
  const [text, setText] = useState("");
  const stream = useStream<{ messages: Message[] }>({
    apiUrl: window.location.origin,
    assistantId: "agent",
    messagesKey: "messages",
    threadId,
    reconnectOnMount: true,
    onThreadId: (id) => {
      sessionStorage.setItem(THREAD_KEY, id);
      setThreadId(id);
    },
  });
  const send = (event: FormEvent) => {
    event.preventDefault();
    void stream.submit({ messages: [{ type: "human", content: text }] });
    setText("");
  };
  const pending = stream.interrupt;
  return (
    <main>
      <p data-testid="status">{stream.isLoading ? "streaming" : "ready"}</p>
      <ul>
        {stream.messages.map((message) => (
          <li key={message.id} data-role={message.type}>
            <span className="text">{textOf(message)}</span>
          </li>
        ))}
      </ul>
      {pending && !stream.isLoading ? (
        <div data-testid="interrupt">
          <p>{JSON.stringify(pending.value)}</p>
          <button
            onClick={() =>
              void stream.submit(undefined, { command: { resume: { approved: true } } })
            }
          >
            Approve
          </button>
        </div>
      ) : null}
      <form onSubmit={send}>
        <input aria-label="Message" value={text} onChange={(e) => setText(e.target.value)} />
        <button type="submit">Send</button>
      </form>
    </main>
  );
}
