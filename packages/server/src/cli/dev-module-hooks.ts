import type { MessagePort } from "node:worker_threads";

/**
 * Module hooks of a `tenxgraph dev` child (registered by dev-module-report.ts): every file the
 * process loads outside node_modules is posted to the main thread, which tells the dev parent.
 * They run on the loader's own thread and change nothing about how a module loads.
 */
let port: MessagePort | undefined;

export function initialize(data: { port: MessagePort }): void {
  port = data.port;
}

export async function load(
  url: string,
  context: unknown,
  nextLoad: (url: string, context: unknown) => Promise<unknown>,
): Promise<unknown> {
  // Posted before loading, so a file that fails to compile is watched too: fixing it restarts.
  if (url.startsWith("file:") && !url.includes("/node_modules/")) port?.postMessage(url);
  return nextLoad(url, context);
}
