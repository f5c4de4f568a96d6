import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, watch, type FSWatcher } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { findConfigFile } from "../project/config.js";
import type { ServeArgs } from "./api.js";
import type { DevModuleMessage } from "./dev-module-report.js";

/**
 * `tenxgraph dev`: runs `tenxgraph api` in a child process and restarts it (a fresh process, so
 * every module is loaded anew) when a file of the agent's module graph changes: the files the
 * child loaded outside node_modules, as its module hooks report them, plus the config and its
 * env file. Anything else (a database, a log redirected into the folder, files the agent
 * writes) never restarts it.
 */
export async function runDev(args: ServeArgs): Promise<void> {
  const configPath = findConfigFile(process.cwd(), args.config);
  const root = dirname(configPath);
  const here = dirname(fileURLToPath(import.meta.url));
  const childArgs = [
    "--import",
    pathToFileURL(join(here, "dev-module-report.js")).href,
    join(here, "main.js"),
    "api",
    "--config",
    configPath,
    "--host",
    args.host,
    "--port",
    String(args.port),
    ...(args.noInspector ? ["--no-inspector"] : []),
    ...(args.traceUrl === undefined ? [] : ["--trace-url", args.traceUrl]),
  ];
  const watched = new Set([configPath, ...envFileOf(configPath)]);
  const watchers: FSWatcher[] = [];
  const folders = new Set<string>();
  let child: ChildProcess | null = null;
  let restartTimer: NodeJS.Timeout | undefined;

  const changed = (path: string) => {
    if (!watched.has(path)) return;
    clearTimeout(restartTimer);
    // Editors write in bursts: one restart per burst.
    restartTimer = setTimeout(() => {
      console.log(`tenxgraph dev: ${relative(root, path) || path} changed, restarting`);
      restart();
    }, 200);
  };
  /** One recursive watch of the project folder, and one per folder outside it that holds a module. */
  const watchFolder = (folder: string, recursive: boolean) => {
    if (folders.has(folder)) return;
    folders.add(folder);
    watchers.push(
      watch(folder, { recursive }, (_event, file) => {
        if (file) changed(resolve(folder, String(file)));
      }),
    );
  };
  const start = () => {
    const started = spawn(process.execPath, childArgs, {
      stdio: ["inherit", "inherit", "inherit", "ipc"],
    });
    started.on("message", (message: DevModuleMessage) => {
      if (message?.type !== "tenxgraph-dev-module") return;
      watched.add(message.path);
      if (!message.path.startsWith(root + sep)) watchFolder(dirname(message.path), false);
    });
    child = started;
  };
  const restart = () => {
    const old = child;
    if (!old || old.exitCode !== null) return start();
    old.once("exit", start);
    old.kill("SIGTERM");
  };
  watchFolder(root, true);
  start();
  const stop = () => {
    for (const watcher of watchers) watcher.close();
    clearTimeout(restartTimer);
    if (child && child.exitCode === null) child.once("exit", () => process.exit(0)).kill("SIGTERM");
    else process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

/** The env file the config names (`env`), if it can be read; the child reports a bad config. */
function envFileOf(configPath: string): string[] {
  try {
    const config = JSON.parse(readFileSync(configPath, "utf8")) as { env?: unknown };
    return typeof config.env === "string" ? [resolve(dirname(configPath), config.env)] : [];
  } catch {
    return [];
  }
}
