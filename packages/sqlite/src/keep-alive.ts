/**
 * Objects of better-sqlite3 that must never be garbage-collected. Node.js 24.19 and later abort
 * the process (`Assertion failed: (env) != nullptr` in `RemoveEnvironmentCleanupHook`) when a
 * better-sqlite3 12 `Statement` or `Database` is collected by a GC that runs outside JavaScript,
 * because their destructors need a context that is not there. Version 13 fixes it but does not
 * run on Node.js 20. So the checkpointer prepares its statements once per connection, and parks
 * everything a connection made here when it is closed: a few small objects per connection,
 * kept for the life of the process.
 */
const parked = new Set<object>();

/** Keeps `object` reachable until the process exits, and returns it. */
export function keepAlive<T extends object>(object: T): T {
  parked.add(object);
  return object;
}
