import { useChat } from "@ai-sdk/react";
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from "ai";
import { useEffect, useState, type FormEvent } from "react";

/** The chat's id (the thread's), kept by the tab so a reload finds the same chat. */
function chatId(): string {
  const kept = sessionStorage.getItem("chat-id");
  if (kept) return kept;
  const id = crypto.randomUUID();
  sessionStorage.setItem("chat-id", id);
  return id;
}

const id = chatId();
const saved = JSON.parse(sessionStorage.getItem(`chat-${id}`) ?? "[]") as UIMessage[];

/**
 * A plain `useChat` page on tenxgraph: the default transport pointed at `/v1/chat` (the dev
 * server proxies it to `tenxgraph api`), `resume: true` so a reload reattaches to a run in
 * progress, and approvals sent back as soon as they are all answered.
 */
export function ChatPage() {
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    id,
    messages: saved,
    transport: new DefaultChatTransport({ api: "/v1/chat" }),
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState("");
  useEffect(() => sessionStorage.setItem(`chat-${id}`, JSON.stringify(messages)), [messages]);

  const send = (event: FormEvent) => {
    event.preventDefault();
    if (input.trim() === "") return;
    void sendMessage({ text: input });
    setInput("");
  };
  const decide = (approvalId: string, approved: boolean) =>
    void addToolApprovalResponse({ id: approvalId, approved });

  return (
    <main style={{ maxWidth: 720, margin: "2rem auto", fontFamily: "sans-serif" }}>
      <h1>tenxgraph + useChat</h1>
      {messages.map((message) => (
        <section key={message.id} className="message" data-role={message.role}>
          <strong>{message.role === "user" ? "You" : "Agent"}</strong>
          {message.parts.map((part, i) => (
            <Part key={i} part={part} decide={decide} />
          ))}
        </section>
      ))}
      <form onSubmit={send}>
        <input
          aria-label="Message"
          value={input}
          onChange={(event) => setInput(event.target.value)}
          placeholder="refund order 42"
        />
        <button type="submit" disabled={status === "streaming" || status === "submitted"}>
          Send
        </button>
      </form>
      <p data-testid="status">{status}</p>
      {error && <p role="alert">{error.message}</p>}
    </main>
  );
}

type AnyPart = UIMessage["parts"][number];

function Part({ part, decide }: { part: AnyPart; decide: (id: string, ok: boolean) => void }) {
  if (part.type === "text") return <p className="text">{part.text}</p>;
  if (part.type === "reasoning") return <p className="reasoning">{part.text}</p>;
  if (part.type === "data-run-status") {
    const data = part.data as { status: string };
    return <p className="run-status">run: {data.status}</p>;
  }
  if (!part.type.startsWith("tool-") || !("state" in part)) return null;
  const name = part.type.slice("tool-".length);
  return (
    <div className="tool" data-tool={name} data-state={part.state}>
      <code>
        {name}({JSON.stringify(part.input)})
      </code>{" "}
      {part.state === "approval-requested" && (
        <>
          <button onClick={() => decide(part.approval.id, true)}>Approve</button>
          <button onClick={() => decide(part.approval.id, false)}>Deny</button>
        </>
      )}
      {part.state === "output-available" && <span className="output">{String(part.output)}</span>}
      {part.state === "output-error" && <span className="output">{part.errorText}</span>}
    </div>
  );
}
