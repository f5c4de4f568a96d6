/**
 * `npm run example:chat-ui`: `tenxgraph api` on this folder's agent (port 8123) and the chat
 * page's dev server (http://127.0.0.1:5173), which proxies `/v1` to it. Ctrl-C stops both.
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
    here("tenxgraph.json"),
    "--port",
    "8123",
    "--no-inspector",
  ],
  { stdio: "inherit" },
);
const page = await createServer({
  configFile: here("vite.config.ts"),
  server: { host: "127.0.0.1", port: 5173 },
});
await page.listen();
console.log("chat page: http://127.0.0.1:5173/ (API on http://127.0.0.1:8123)");
process.once("SIGINT", () => {
  api.kill("SIGTERM");
  void page.close().then(() => process.exit(0));
});
