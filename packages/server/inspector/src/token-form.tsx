import { useState } from "preact/hooks";
import { saveToken } from "./connection.js";

/** Asks for the JWT the API wants; it is kept for this tab only (sessionStorage). */
export function TokenForm(props: { reason: string; onSaved: () => void }) {
  const [token, setToken] = useState("");
  const submit = (event: Event) => {
    event.preventDefault();
    saveToken(token.trim());
    props.onSaved();
  };
  return (
    <form class="card token-form" onSubmit={submit}>
      <h2>This server wants a token</h2>
      <p class="muted">{props.reason}</p>
      <p>
        Paste a JWT the API accepts (the same <code>Authorization: Bearer</code> token your app
        sends). It stays in this tab only and is sent to this server only.
      </p>
      <textarea
        name="token"
        rows={4}
        placeholder="eyJhbGciOi…"
        value={token}
        onInput={(e) => setToken(e.currentTarget.value)}
      />
      <div class="actions">
        <button type="submit" disabled={token.trim() === ""}>
          Use this token
        </button>
      </div>
    </form>
  );
}
