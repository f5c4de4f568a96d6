/**
 * What `BaseCheckpointer` hands its store's protected methods (pages and filters already
 * checked), and the history options every store's constructor takes.
 */
import type { Page } from "./store-checks.js";

/** A page of a transcript: of the latest version, or of `version` when it is not `null`. */
export interface MessagePage extends Page {
  version: number | null;
}

/** A page of versions, newest first: at most `limit` (`null`: all), older than `before` (`null`: any). */
export interface VersionRange {
  limit: number | null;
  before: number | null;
}

/** What every store does with old versions and expired threads, set by its options. */
export interface HistoryOptions {
  /**
   * Keep at most this many versions per thread: each write deletes, in its own transaction,
   * the versions it pushed out (their messages stay until `pruneVersions`). Default: keep all.
   */
  keepVersions?: number;
  /**
   * Run `deleteExpiredThreads` every this many milliseconds while the store is open (the timer
   * does not keep the process alive). Default: never; call it yourself.
   */
  deleteExpiredEveryMs?: number;
}

/** A `listThreads` filter, paged like {@link Page}. */
export interface ThreadFilter extends Page {
  userId: string | undefined;
  /** The thread whose direct children to list; `null`: the top-level threads. */
  parentThreadId: string | null;
}
