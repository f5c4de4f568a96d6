import type { TenxgraphClient } from "@tenxgraph/client";
import { useCallback, useEffect, useState } from "preact/hooks";
import { explain, needsToken } from "./connection.js";
import { useInspector } from "./inspector-context.js";

/** Data read from the API: still loading, loaded, or failed with a sentence to show. */
export type Loaded<T> =
  | { state: "loading" }
  | { state: "ready"; value: T }
  | { state: "failed"; message: string; error: unknown };

/**
 * Reads `load(client)` when the component mounts and whenever `keys` change; `reload()` reads
 * again (keeping the old value shown until the new one comes). A 401 asks for a token.
 */
export function useLoad<T>(
  load: (client: TenxgraphClient, signal: AbortSignal) => Promise<T>,
  keys: readonly unknown[],
): [Loaded<T>, () => void] {
  const { client, askForToken } = useInspector();
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: "loading" });
  const [round, setRound] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    load(client, controller.signal).then(
      (value) => !controller.signal.aborted && setLoaded({ state: "ready", value }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        if (needsToken(error)) askForToken(explain(error));
        setLoaded({ state: "failed", message: explain(error), error });
      },
    );
    return () => controller.abort();
    // `load` is a new function on every render: the keys say when it reads something else.
  }, [client, round, ...keys]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return [loaded, reload];
}
