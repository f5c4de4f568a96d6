import { spawn, type ChildProcess } from "node:child_process";
import { watch } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { findConfigFile } from "../project/config.js";
import type { ServeArgs } from "./api.js";

/** Changes under these folders never reload (dependencies, stores, builds). */
const IGNORED =
  /(^|[/\\])(node_modules|\.git|\.tenxgraph|dist)([/\\]|$)|\.db(-wal|-shm|-journal)?$/;

/**
 * `tenxgraph dev`: runs `tenxgraph api` in a child process and restarts it when a file in the
 * project folder changes (a fresh process, so every module is loaded anew).
 */
export async function runDev(args: ServeArgs): Promise<void> {
  const configPath = findConfigFile(process.cwd(), args.config);
  const root = dirname(configPath);
  const main = resolve(dirname(fileURLToPath(import.meta.url)), "main.js");
  const cliArgs = [
    main,
    "api",
    "--config",
    configPath,
    "--host",
    args.host,
    "--port",
    String(args.port),
    ...(args.noInspector ? ["--no-inspector"] : []),
  ];
  let child: ChildProcess | null = null;
  let restartTimer: NodeJS.Timeout | undefined;
  const start = () => {
    child = spawn(process.execPath, cliArgs, { stdio: "inherit" });
  };
  const restart = () => {
    const old = child;
    if (!old || old.exitCode !== null) return start();
    old.once("exit", start);
    old.kill("SIGTERM");
  };
  start();
  const watcher = watch(root, { recursive: true }, (_event, file) => {
    if (!file || IGNORED.test(String(file))) return;
    clearTimeout(restartTimer);
    // Editors write in bursts: one restart per burst.
    restartTimer = setTimeout(() => {
      console.log(`tenxgraph dev: ${String(file)} changed, restarting`);
      restart();
    }, 200);
  });
  const stop = () => {
    watcher.close();
    clearTimeout(restartTimer);
    if (child && child.exitCode === null) child.once("exit", () => process.exit(0)).kill("SIGTERM");
    else process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
