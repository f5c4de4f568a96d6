import type { ChatContext } from "../chat/chat-context.js";
import type { RunService, RunsContext } from "../background/runs-context.js";
import type { StorageContext } from "../storage/storage-context.js";
import type { LgGraphs } from "../langgraph/lg-context.js";
import type { CronContext } from "../schedules/cron-scheduler.js";

/**
 * What every route works with, built once by `createApp`: the union of what each job's routes
 * need (each job folder names its own part, so none imports this one).
 */
export interface ServerContext extends ChatContext, RunsContext, StorageContext, CronContext {
  runs: RunService | null;
  /** The graphs LangGraph's routes serve (the default one is `graph`). */
  graphs: LgGraphs;
}
