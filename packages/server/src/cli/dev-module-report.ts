/**
 * Loaded with `--import` into the server process `tenxgraph dev` runs: registers
 * dev-module-hooks.ts and sends each project file the process loads to the dev parent over IPC
 * (`{ type: "tenxgraph-dev-module", path }`), so the parent watches exactly the agent's module
 * graph. Neither the port nor the IPC channel keeps the process alive.
 */
import { register } from "node:module";
import { fileURLToPath } from "node:url";
import { MessageChannel } from "node:worker_threads";

/** What the child tells the dev parent. */
export interface DevModuleMessage {
  type: "tenxgraph-dev-module";
  path: string;
}

const { port1, port2 } = new MessageChannel();
port1.on("message", (url: string) => {
  const message: DevModuleMessage = { type: "tenxgraph-dev-module", path: fileURLToPath(url) };
  if (process.connected) process.send?.(message);
});
port1.unref();
process.channel?.unref();
register("./dev-module-hooks.js", import.meta.url, {
  data: { port: port2 },
  transferList: [port2],
});
