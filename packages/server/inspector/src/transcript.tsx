import { messageText, type LedgerEntry, type WireMessage } from "@tenxgraph/client";
import { clockTime, pretty } from "./format.js";
import { callRef, ledgerRowId } from "./ledger-links.js";

/** The transcript as a chat; each tool call links to the ledger row that records it. */
export function Transcript(props: {
  messages: WireMessage[];
  /** Messages still being written (model tokens), by id. */
  drafts: Record<string, string>;
  links: Map<string, LedgerEntry>;
}) {
  const drafts = Object.entries(props.drafts);
  if (props.messages.length === 0 && drafts.length === 0) {
    return <p class="empty">No messages yet. Send the first one below.</p>;
  }
  return (
    <ol class="transcript">
      {props.messages.map((m) => (
        <li key={m.message_id} class={`bubble role-${m.role}`} data-message={m.message_id}>
          <div class="meta">
            <span>{m.role}</span>
            <span class="muted">{clockTime(m.timestamp)}</span>
          </div>
          <MessageBody message={m} links={props.links} />
        </li>
      ))}
      {drafts.map(([id, text]) => (
        <li key={id} class="bubble role-assistant draft" data-draft={id}>
          <div class="meta">
            <span>assistant</span>
            <span class="muted">writing…</span>
          </div>
          <p class="text">{text}</p>
        </li>
      ))}
    </ol>
  );
}

function MessageBody(props: { message: WireMessage; links: Map<string, LedgerEntry> }) {
  const { message } = props;
  const text = messageText(message);
  const results = message.content.filter((b) => b.type === "tool_result");
  return (
    <>
      {text !== "" && <p class="text">{text}</p>}
      {results.map((block, i) => (
        <pre key={i} class={block.is_error ? "tool-output error" : "tool-output"}>
          {block.is_error ? "failed: " : ""}
          {pretty(block.output)}
        </pre>
      ))}
      {(message.tools_calls ?? []).map((call) => {
        const ref = callRef({ messageId: message.message_id, callId: call.id });
        const entry = props.links.get(ref);
        return (
          <div key={call.id} class="tool-call" data-call={call.id}>
            <code>
              {call.function.name}({call.function.arguments})
            </code>
            {entry ? (
              <a class={`badge ledger-${entry.status}`} href={`#${ledgerRowId(entry.key)}`}>
                ledger: {entry.status}, attempt {entry.attempt}
              </a>
            ) : (
              <span class="badge muted">not in the ledger</span>
            )}
          </div>
        );
      })}
    </>
  );
}
