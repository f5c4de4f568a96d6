/**
 * `npm run example:langgraph-ui`: `tenxgraph api` on examples/chat-ui's agent (port 8124) and the
 * `useStream` page's dev server (http://127.0.0.1:5174), which proxies LangGraph's routes to it.
 * A reload mid-run rejoins the run when the API has a queue: set TENXGRAPH_RUNS_DSN to a
 * PostgreSQL database. Ctrl-C stops both.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createServer } from "vite";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const api = spawn(
  process.execPath,
  [
    here("../../packages/server/bin/tenxgraph.js"),
    "api",
    "--config",
    here("../chat-ui/tenxgraph.json"),
    "--port",
    "8124",
    "--no-inspector",
  ],
  { stdio: "inherit" },
);
const page = await createServer({
  configFile: here("vite.config.ts"),
  server: { host: "127.0.0.1", port: 5174 },
});
await page.listen();
console.log("useStream page: http://127.0.0.1:5174/ (API on http://127.0.0.1:8124)");
process.once("SIGINT", () => {
  api.kill("SIGTERM");
  void page.close().then(() => process.exit(0));
});
