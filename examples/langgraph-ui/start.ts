/**
 * `npm run example:langgraph-ui`: `tenxgraph api` on examples/chat-ui's agent (port 8124) and the
 * `useStream` page's dev server (http://127.0.0.1:5174), which proxies LangGraph's routes to it.
 * A reload mid-run rejoins the run when the API has a queue: set TENXGRAPH_RUNS_DSN to a
 * PostgreSQL database. Ctrl-C stops both.
 */
import { fileURLToPath } from "node:url";
import { serveWithPage } from "../chat-ui/serve-with-page.js";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
await serveWithPage({
  config: here("../chat-ui/tenxgraph.json"),
  viteConfig: here("vite.config.ts"),
  apiPort: 8124,
  pagePort: 5174,
  name: "useStream page",
});
