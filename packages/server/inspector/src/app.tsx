import { useEffect, useMemo, useState } from "preact/hooks";
import { createClient, saveToken, savedToken } from "./connection.js";
import { GraphPage } from "./graph-page.js";
import { InspectorContext, type Inspector } from "./inspector-context.js";
import { followLink, hrefOf, useRoute } from "./router.js";
import { ThreadList } from "./thread-list.js";
import { ThreadPage } from "./thread-page.js";
import { TokenForm } from "./token-form.js";
import { loadSettings, NO_SETTINGS, type InspectorSettings } from "./trace-link.js";

/** The inspector: a header, the token form when the API wants one, and the current view. */
export function App() {
  const route = useRoute();
  const [tokenReason, setTokenReason] = useState<string | null>(null);
  // Bumped when a token is saved: every view reads its data again with it.
  const [session, setSession] = useState(0);
  const [settings, setSettings] = useState<InspectorSettings>(NO_SETTINGS);
  useEffect(() => {
    const abort = new AbortController();
    void loadSettings(abort.signal).then(setSettings);
    return () => abort.abort();
  }, []);
  const inspector = useMemo<Inspector>(
    () => ({ client: createClient(), askForToken: setTokenReason, settings }),
    [session, settings],
  );
  const tokenSaved = () => {
    setTokenReason(null);
    setSession((s) => s + 1);
  };
  const forgetToken = () => {
    saveToken(null);
    setSession((s) => s + 1);
  };
  return (
    <InspectorContext.Provider value={inspector}>
      <header class="top">
        <a class="brand" href={hrefOf({ view: "threads" })} onClick={followLink}>
          tenxgraph inspector
        </a>
        <nav>
          <a href={hrefOf({ view: "threads" })} onClick={followLink}>
            Threads
          </a>
          <a href={hrefOf({ view: "graph" })} onClick={followLink}>
            Graph
          </a>
        </nav>
        {savedToken() !== null && (
          <button class="link" onClick={forgetToken}>
            Forget token
          </button>
        )}
      </header>
      <main key={session}>
        {tokenReason !== null && <TokenForm reason={tokenReason} onSaved={tokenSaved} />}
        {tokenReason === null && route.view === "threads" && <ThreadList />}
        {tokenReason === null && route.view === "thread" && (
          <ThreadPage key={route.threadId} threadId={route.threadId} />
        )}
        {tokenReason === null && route.view === "graph" && <GraphPage />}
        {tokenReason === null && route.view === "missing" && (
          <p class="card empty">
            Nothing here ({route.path}).{" "}
            <a href={hrefOf({ view: "threads" })} onClick={followLink}>
              Back to the threads
            </a>
          </p>
        )}
      </main>
    </InspectorContext.Provider>
  );
}
