/**
 * `npm run example:chat-ui`: `tenxgraph api` on this folder's agent (port 8123) and the chat
 * page's dev server (http://127.0.0.1:5173), which proxies `/v1` to it. Ctrl-C stops both.
 */
import { fileURLToPath } from "node:url";
import { serveWithPage } from "./serve-with-page.js";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
await serveWithPage({
  config: here("tenxgraph.json"),
  viteConfig: here("vite.config.ts"),
  apiPort: 8123,
  pagePort: 5173,
  name: "chat page",
});
