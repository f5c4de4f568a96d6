import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The chat page's dev server: the page from src/, and `/v1` proxied to `tenxgraph api`
 * (`CHAT_UI_API`, default http://127.0.0.1:8123), so the page and the API share an origin.
 * esbuild compiles the JSX; no React plugin is needed for a page this size.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  esbuild: { jsx: "automatic" },
  server: {
    proxy: { "/v1": { target: process.env.CHAT_UI_API ?? "http://127.0.0.1:8123" } },
  },
});
