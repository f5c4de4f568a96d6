import type { AuthUser } from "../http/server-env.js";
import type { ThreadsContext } from "../threads/threads-context.js";
import type { SocketPeaks } from "./socket-limits.js";

/** What running the graph over HTTP and the WebSocket works with, beside the threads' context. */
export interface InvokeContext extends ThreadsContext {
  /** True when requests are authenticated: ownership is enforced. */
  authConfigured: boolean;
  /** `POST /v1/graph/setup` may attach remote tools: no auth and not `MODE=production`. */
  remoteToolSetup: boolean;
  /** The user of a request (401 `ApiError` when refused), for the WebSocket's handshake. */
  authenticate: (request: Request) => Promise<AuthUser>;
  /** Most WebSockets open at once (`websocket.max_connections`); `null`: no limit. */
  maxSockets: number | null;
  /** Largest request body, and so largest WebSocket frame, in bytes. */
  maxBodyBytes: number;
  /** Origins configured for browser pages (`ORIGINS`); `undefined`: the server's own only. */
  origins: string[] | undefined;
  /** The most any one WebSocket has held at once, for monitoring (see `socket-limits.ts`). */
  socketPeaks: SocketPeaks;
}
