import type { BaseState, CompiledGraph, Logger } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import type { FileStore } from "../storage/file-store.js";
import type { AuthUser } from "./server-env.js";
import type { StateEditPolicy } from "../threads/state-edit-policy.js";
import type { MemoryStore } from "../storage/memory-store.js";
import type { RunEventFollower } from "../background/run-event-follower.js";
import type { PgRunStore } from "../background/run-store.js";

/** Background runs: their store and queue on PostgreSQL, and the waker of their readers. */
export interface RunService {
  store: PgRunStore;
  follower: RunEventFollower;
}

/** Names a new thread from the texts of its first messages. */
export type ThreadNameGenerator = (texts: string[]) => string | Promise<string>;

/** What every route works with, built once by `createApp`. */
export interface ServerContext {
  graph: CompiledGraph<BaseState>;
  checkpointer: Checkpointer;
  memory: MemoryStore;
  files: FileStore;
  threadNames: ThreadNameGenerator | null;
  /** True when requests are authenticated: ownership is enforced. */
  authConfigured: boolean;
  /** `POST /v1/graph/setup` may attach remote tools: no auth and not `MODE=production`. */
  remoteToolSetup: boolean;
  /** The user of a request (401 `ApiError` when refused), for the WebSocket's handshake. */
  authenticate: (request: Request) => Promise<AuthUser>;
  /** Most WebSockets open at once (`websocket.max_connections`); `null`: no limit. */
  maxSockets: number | null;
  /** Who may add tool calls or results, or set `as_node`, through a state edit. */
  stateEdits: StateEditPolicy;
  /** Largest request body, and so largest WebSocket frame, in bytes. */
  maxBodyBytes: number;
  /** Origins configured for browser pages (`ORIGINS`); `undefined`: the server's own only. */
  origins: string[] | undefined;
  /** The most any one WebSocket has held at once, for monitoring (see `ws/socket-limits.ts`). */
  socketPeaks: SocketPeaks;
  logger: Logger;
  /** Background runs; `null` when not configured (their routes answer 501). */
  runs: RunService | null;
  /** Aborted when the server closes: long waits (run streams, joins) end then. */
  closing: AbortController;
  /** Runs in progress, so a shutdown can let them end. */
  activeRuns: Set<Promise<unknown>>;
}

/** High-water marks of WebSocket sessions: frames waiting to run, output not yet sent. */
export interface SocketPeaks {
  queuedFrames: number;
  queuedBytes: number;
  bufferedBytes: number;
}

/** Keeps `work` in `ctx.activeRuns` until it settles. */
export function track<T>(ctx: ServerContext, work: Promise<T>): Promise<T> {
  ctx.activeRuns.add(work);
  const forget = () => ctx.activeRuns.delete(work);
  work.then(forget, forget);
  return work;
}
