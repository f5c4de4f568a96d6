import { runRoutes } from "../background/run-routes.js";
import { runWebhookRoutes } from "../background/run-webhooks.js";
import { cronRoutes } from "../schedules/cron-routes.js";
import { chatRoutes } from "../chat/chat-routes.js";
import { graphRoutes } from "../invoke/graph-routes.js";
import { graphRunRoutes } from "../invoke/graph-run-routes.js";
import { fileRoutes } from "../storage/file-routes.js";
import { storeRoutes } from "../storage/memory-routes.js";
import { storeItemRoutes } from "../storage/store-item-routes.js";
import { threadHistoryRoutes } from "../threads/history-routes.js";
import { ledgerRoutes } from "../threads/ledger-routes.js";
import { threadMessageRoutes } from "../threads/message-routes.js";
import { threadRoutes } from "../threads/thread-routes.js";
import type { Route } from "../http/route-table.js";
import type { ServerContext } from "./server-context.js";

/**
 * Every route of the API, in the order the app registers them (and `/openapi.json` lists
 * them). A new route module's table goes here.
 */
export const API_ROUTES: readonly Route<ServerContext>[] = [
  ...graphRoutes,
  ...graphRunRoutes,
  ...threadRoutes,
  ...threadHistoryRoutes,
  ...runRoutes,
  ...runWebhookRoutes,
  ...cronRoutes,
  ...threadMessageRoutes,
  ...ledgerRoutes,
  ...storeRoutes,
  ...storeItemRoutes,
  ...fileRoutes,
  ...chatRoutes,
];
