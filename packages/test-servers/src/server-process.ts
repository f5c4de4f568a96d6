import { spawn } from "node:child_process";
import type { ChildProcess, SpawnOptions } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** How long a server gets to accept connections (or to exit) before we give up on it. */
const READY_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 30_000;
const POLL_INTERVAL_MS = 50;

/** How a server process ended: its exit code, the signal that killed it, or why it never ran. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (e.g. ENOENT: the program is missing). */
  spawnError?: Error;
}

/** Options for {@link startLogged}: the command, where its output goes, and who runs it. */
export interface LoggedProcessOptions {
  command: string;
  args: string[];
  logFile: string;
  cwd: string;
  /** Run as this user instead of the current one (set when root must drop privileges). */
  user?: { uid: number; gid: number };
}

/**
 * A long-running server process whose stdout and stderr go to a log file. `exited` settles
 * once the process is gone, however it ended.
 */
export interface LoggedProcess {
  child: ChildProcess;
  exited: Promise<ProcessExit>;
}

/** Starts a server process, appending everything it prints to `logFile`. */
export function startLogged(options: LoggedProcessOptions): LoggedProcess {
  const log = openSync(options.logFile, "a");
  const spawnOptions: SpawnOptions = {
    cwd: options.cwd,
    stdio: ["ignore", log, log],
    ...(options.user ?? {}),
  };
  try {
    const child = spawn(options.command, options.args, spawnOptions);
    killOnExit(child);
    const exited = new Promise<ProcessExit>((resolve) => {
      child.on("exit", (code, signal) => resolve({ code, signal }));
      child.on("error", (spawnError) => resolve({ code: null, signal: null, spawnError }));
    });
    return { child, exited };
  } finally {
    // The child holds its own copy of the descriptor; ours is no longer needed.
    closeSync(log);
  }
}

/** Server processes started here that have not exited yet. */
const runningServers = new Set<ChildProcess>();

// If this Node.js process exits while servers still run (a test that failed before its cleanup,
// an aborted run), they go too: no server should outlive the tests that started it.
process.on("exit", () => {
  for (const child of runningServers) child.kill("SIGKILL");
});

function killOnExit(child: ChildProcess): void {
  runningServers.add(child);
  child.once("exit", () => runningServers.delete(child));
}

/** Resolves with the process's exit, or rejects after `timeoutMs` if it is still running. */
export async function waitForExit(
  server: LoggedProcess,
  timeoutMs = EXIT_TIMEOUT_MS,
): Promise<ProcessExit> {
  const timer = new AbortController();
  const timedOut = sleep(timeoutMs, undefined, { signal: timer.signal }).then(() => {
    throw new Error(`process ${server.child.pid} did not exit within ${timeoutMs} ms`);
  });
  try {
    return await Promise.race([server.exited, timedOut]);
  } finally {
    timer.abort();
    timedOut.catch(() => {}); // the abort rejects it; nobody is waiting any more
  }
}

/**
 * Polls `isReady` until it resolves true. Fails fast if the process exits first (with its exit
 * and the log's tail, since that is where the server says why), or after a minute.
 */
export async function waitUntilReady(
  server: LoggedProcess,
  isReady: () => Promise<boolean>,
  describe: () => string,
): Promise<void> {
  let exit: ProcessExit | undefined;
  void server.exited.then((result) => (exit = result));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exit) throw new ServerExitedError(describeExit(exit), describe());
    if (await isReady()) return;
    await sleep(POLL_INTERVAL_MS);
  }
  throw new Error(`not ready after ${READY_TIMEOUT_MS} ms\n${describe()}`);
}

/** A server process that exited while we were waiting for it to accept connections. */
export class ServerExitedError extends Error {
  constructor(
    exit: string,
    readonly details: string,
  ) {
    super(`server exited during startup (${exit})\n${details}`);
  }
}

function describeExit(exit: ProcessExit): string {
  if (exit.spawnError) return `could not start it: ${exit.spawnError.message}`;
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

/** The size of a log file in bytes (0 before it exists): where the next run's lines begin. */
export function logSize(logFile: string): number {
  return existsSync(logFile) ? statSync(logFile).size : 0;
}

/**
 * The last lines a log file got since byte `since` (so an earlier run's lines are not
 * mistaken for this one's), or a note that there are none.
 */
export function logTail(logFile: string, since = 0, lines = 30): string {
  if (!existsSync(logFile)) return `(no log at ${logFile})`;
  const text = readFileSync(logFile).subarray(since).toString("utf8").trimEnd();
  const tail = text.split("\n").slice(-lines).join("\n");
  return `--- last lines of ${logFile} ---\n${tail}`;
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. Another process may still take it before
 * the server binds it, so callers retry on "address in use".
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no TCP port assigned");
  return address.port;
}

/**
 * The ids of the direct children of `pid`, read from /proc (empty where there is no /proc).
 * Crash simulation uses it to kill a server's workers along with the server.
 */
export function childPids(pid: number): number[] {
  if (!existsSync("/proc")) return [];
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((candidate) => parentPid(candidate) === pid);
}

/** True while `pid` is a process that has not yet exited (a zombie counts as exited). */
export function isRunning(pid: number): boolean {
  const state = procStat(pid)?.state;
  return state !== undefined && state !== "Z" && state !== "X";
}

/** Waits until none of `pids` is running, or fails after `timeoutMs`. */
export async function waitUntilGone(pids: number[], timeoutMs = EXIT_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(isRunning)) {
    if (Date.now() > deadline) throw new Error(`processes ${pids.join(", ")} did not exit`);
    await sleep(POLL_INTERVAL_MS);
  }
}

function parentPid(pid: number): number | undefined {
  return procStat(pid)?.ppid;
}

function procStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: read after it.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", ppid: Number(fields[1]) };
  } catch {
    return undefined; // gone, or no /proc
  }
}
