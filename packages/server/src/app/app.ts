import { jsonLogger, type BaseState, type CompiledGraph, type Logger } from "@tenxgraph/core";
import { Hono, type Context } from "hono";
import { corsMiddleware, originGuard, originsFromEnv } from "../http/cors.js";
import { HTTPException } from "hono/http-exception";
import { ApiError, toApiError } from "../http/api-error.js";
import { stateEditPolicy } from "../threads/state-edit-policy.js";
import { fail } from "../http/envelope.js";
import { authMiddleware, requestAuthenticator, type AuthOption } from "../http/middleware/auth.js";
import { bodySizeLimit } from "../http/middleware/body-size.js";
import { requestIdMiddleware } from "../http/middleware/request-id.js";
import { inspectorRoutes } from "../http/inspector-routes.js";
import { API_ROUTES } from "./api-routes.js";
import { LANGGRAPH_ROUTES } from "../langgraph/lg-routes.js";
import { singleGraph, type LgGraphs } from "../langgraph/lg-context.js";
import { queueLgCronTick } from "../langgraph/lg-crons.js";
import { isLangGraphPath, lgErrorBody } from "../langgraph/lg-http.js";
import { openApiRoutes } from "./openapi.js";
import { registerRoutes } from "../http/route-table.js";
import type { ServerContext } from "./server-context.js";
import { LiveChats } from "../chat/live-chats.js";
import type { RunService } from "../background/runs-context.js";
import type { ThreadNameGenerator } from "../threads/threads-context.js";
import type { ServerEnv } from "../http/server-env.js";
import { InMemoryFileStore, type FileStore } from "../storage/file-store.js";
import { StoreMemories, type MemoryStore } from "../storage/memory-store.js";
import { InMemoryStore, type Store } from "@tenxgraph/core/store";

/** Options of {@link createApp}. Only `graph` is required. */
export interface AppOptions {
  /** The compiled graph to serve; its checkpointer holds threads, messages and the ledger. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  graph: CompiledGraph<any>;
  /** `null` (default): no authentication, no owners. */
  auth?: AuthOption;
  /**
   * The long-term store of `/v1/store/items` and LangGraph's `/store` routes: default the
   * graph's (`compile({ store })`), so what a node puts a client reads; else one in memory.
   * Given here and in the graph, they must be the same object.
   */
  store?: Store;
  /** `/v1/store/memories` (default: kept in `store`, under each user's `memories`). */
  memory?: MemoryStore;
  /** Where uploads go (default: in this process's memory). */
  files?: FileStore;
  threadNameGenerator?: ThreadNameGenerator | null;
  /** Largest request body in bytes (default `MAX_REQUEST_SIZE` or 10 MB): larger is a 413. */
  maxBodyBytes?: number;
  /**
   * Origins whose pages may call the API from a browser (default `ORIGINS` split on commas).
   * None (the default): no cross-origin access at all. `"*"`: any origin, without credentials.
   */
  corsOrigins?: string[];
  logger?: Logger;
  /** Most WebSockets open at once on `/v1/graph/ws` (default: no limit); more close with 1013. */
  maxSockets?: number | null;
  /** `"production"` refuses remote tool setup (default: the `MODE` environment variable). */
  mode?: string;
  /**
   * Background runs (`/v1/threads/{id}/runs`): a {@link PgRunStore} and a
   * {@link RunEventFollower} on the same PostgreSQL. Without them those routes answer 501.
   */
  runs?: RunService | null;
  /**
   * Let every user make state edits that add tool calls or tool results or set `as_node`
   * (default `PRIVILEGED_STATE_EDITS=true`, else false): continuing after one runs tools with
   * the editor's arguments. Otherwise only users with `adminClaim` may.
   */
  privilegedStateEdits?: boolean;
  /** The token claim (`true`) that allows those edits to its user (default `"admin"`). */
  adminClaim?: string | null;
  /** Serve the web inspector at `/inspector` (default true); its data calls use the API's auth. */
  inspector?: boolean;
  /**
   * Where the inspector links a run's trace: a URL with `{traceId}` in it, replaced by the
   * trace id (`https://jaeger.example/trace/{traceId}`). Default: the id shown as plain text.
   */
  traceUrl?: string;
  /**
   * Every graph the LangGraph routes serve, by graph id, each an assistant (default: `graph`
   * alone, as `agent`). `default` must be `graph`: the /v1 routes serve it.
   */
  graphs?: LgGraphs;
}

/** A server app with the state it shares with `serve`: runs in progress, for graceful shutdown. */
export type TenxgraphApp = Hono<ServerEnv> & { context: ServerContext };

/**
 * The HTTP API for `options.graph`, as a Hono app you can mount or serve: 10xGraph's wire
 * contract (envelope, errors, NDJSON streams), plus the tool ledger and in-doubt decisions.
 *
 * @example
 * const app = createApp({ graph, auth: "jwt" });
 * const response = await app.request("/ping");
 */
export function createApp(options: AppOptions): TenxgraphApp {
  const maxSize = options.maxBodyBytes ?? Number(process.env.MAX_REQUEST_SIZE ?? 10 * 1024 * 1024);
  const origins = options.corsOrigins ?? originsFromEnv();
  const graphs = options.graphs ?? singleGraph(options.graph as CompiledGraph<BaseState>);
  const store = serverStore(options);
  const ctx: ServerContext = {
    graph: options.graph as CompiledGraph<BaseState>,
    graphId: graphs.defaultId,
    checkpointer: options.graph.checkpointer,
    store,
    memory: options.memory ?? new StoreMemories(store),
    files: options.files ?? new InMemoryFileStore(),
    threadNames: options.threadNameGenerator ?? null,
    authConfigured: Boolean(options.auth),
    // Setup changes the graph for every user of the process: only for a local, open server.
    remoteToolSetup: !options.auth && (options.mode ?? process.env.MODE) !== "production",
    authenticate: requestAuthenticator(options.auth),
    maxSockets: options.maxSockets || null,
    maxBodyBytes: maxSize,
    stateEdits: stateEditPolicy(options),
    origins,
    socketPeaks: { queuedFrames: 0, queuedBytes: 0, bufferedBytes: 0 },
    logger: options.logger ?? jsonLogger(),
    runs: options.runs ?? null,
    graphs,
    closing: new AbortController(),
    activeRuns: new Set(),
    chats: new LiveChats(),
    // Ticks of LangGraph's crons queue LangGraph runs: their assistant, stream modes, metadata.
    cronTicks: { langgraph: (tick, user) => queueLgCronTick(ctx, tick, user) },
  };
  const app = new Hono<ServerEnv>();
  app.use(requestIdMiddleware());
  const cors = corsMiddleware(origins);
  if (cors) app.use(cors);
  app.use(originGuard(origins));
  app.use(
    bodySizeLimit({
      maxSize,
      onError: (c) =>
        answerError(
          c,
          new ApiError(
            413,
            "REQUEST_TOO_LARGE",
            `The request body is larger than ${maxSize} bytes`,
          ),
        ),
    }),
  );
  // One authenticator for HTTP and the WebSocket (one JWKS cache).
  app.use(authMiddleware(options.auth ? ctx.authenticate : null));
  registerRoutes(app, ctx, API_ROUTES);
  registerRoutes(app, ctx, LANGGRAPH_ROUTES);
  openApiRoutes(app);
  if (options.inspector ?? true) inspectorRoutes(app, { traceUrl: options.traceUrl ?? null });
  app.notFound((c) =>
    answerError(c, new ApiError(404, "NOT_FOUND", `No route ${c.req.method} ${c.req.path}`)),
  );
  app.onError((error, c) => {
    const apiError =
      error instanceof HTTPException && !(error instanceof ApiError)
        ? new ApiError(error.status as 400, "HTTPException", error.message || "Bad request")
        : toApiError(error);
    if (apiError.status >= 500)
      ctx.logger.error({ err: error, path: c.req.path }, "Request failed");
    return answerError(c, apiError);
  });
  return Object.assign(app, { context: ctx });
}

/**
 * An error raised outside a route's own handler (auth, body size, no such route): in
 * LangGraph's shape on LangGraph's paths, as its routes answer theirs, else in the envelope.
 */
function answerError(c: Context, error: ApiError): Response {
  return isLangGraphPath(c.req.path) ? c.json(lgErrorBody(error), error.status) : fail(c, error);
}

/** The graph's store, or the one given (the same), or a new one in memory. */
function serverStore(options: AppOptions): Store {
  const own = options.graph.store;
  if (options.store && own && options.store !== own) {
    throw new TypeError(
      "createApp: `store` is not the store the graph was compiled with; pass one of them, so " +
        "what nodes write is what clients read",
    );
  }
  return options.store ?? own ?? new InMemoryStore();
}
