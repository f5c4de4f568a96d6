import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The object form keeps the Host header (the shorthand sets changeOrigin), so the API sees the
// page's own origin and its origin guard lets the writes through.
const api = { target: process.env.LANGGRAPH_UI_API ?? "http://127.0.0.1:8124" };

/**
 * The `useStream` page's dev server, as examples/chat-ui's: the page from src/, and LangGraph's
 * routes (`/assistants`, `/threads`, `/runs`) proxied to `tenxgraph api` (`LANGGRAPH_UI_API`,
 * default http://127.0.0.1:8124), so the page and the API share an origin. esbuild compiles the
 * JSX; no React plugin is needed for a page this size.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  esbuild: { jsx: "automatic" },
  server: {
    proxy: { "/assistants": api, "/threads": api, "/runs": api },
  },
});
