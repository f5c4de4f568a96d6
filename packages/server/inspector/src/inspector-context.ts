import type { TenxgraphClient } from "@tenxgraph/client";
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { InspectorSettings } from "./trace-link.js";

/** What every view gets: the client, and a way to ask the person for a token. */
export interface Inspector {
  client: TenxgraphClient;
  /** The server refused the token (or wants one): show the token form. */
  askForToken(reason: string): void;
  /** What the server configured for the page (where trace ids link). */
  settings: InspectorSettings;
}

export const InspectorContext = createContext<Inspector | null>(null);

/** The inspector of the page; views are only rendered inside its provider. */
export function useInspector(): Inspector {
  const inspector = useContext(InspectorContext);
  if (inspector === null) throw new Error("useInspector outside <InspectorContext.Provider>");
  return inspector;
}
