import type { Route } from "../http/route-table.js";
import { lgAssistantRoutes } from "./lg-assistant-routes.js";
import { lgBackgroundRoutes } from "./lg-background-routes.js";
import type { LgContext } from "./lg-context.js";
import { lgCronRoutes } from "./lg-cron-routes.js";
import { lgRunRoutes } from "./lg-run-routes.js";
import { lgStateRoutes } from "./lg-state-routes.js";
import { lgStoreRoutes } from "./lg-store-routes.js";
import { lgThreadRoutes } from "./lg-thread-routes.js";

/**
 * LangGraph's Agent Server API, as `@langchain/langgraph-sdk` calls it: no `/v1` prefix, so it
 * sits beside 10xGraph's routes on the same engine, stores, auth and ownership.
 */
export const LANGGRAPH_ROUTES: readonly Route<LgContext>[] = [
  ...lgAssistantRoutes,
  ...lgThreadRoutes,
  ...lgStateRoutes,
  ...lgRunRoutes,
  ...lgBackgroundRoutes,
  ...lgCronRoutes,
  ...lgStoreRoutes,
];
