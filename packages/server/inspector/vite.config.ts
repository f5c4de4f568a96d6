import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

/**
 * The inspector's build: a static page under `/inspector/`, written to the server package's
 * `dist/inspector/`, which the server serves. Everything is bundled (the client included), so the
 * page loads nothing from anywhere but the server.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/inspector/",
  plugins: [preact()],
  // The client from its source: the page is built with the client of this checkout, whatever
  // order the workspaces build in.
  resolve: {
    alias: {
      "@tenxgraph/client": fileURLToPath(new URL("../../client/src/index.ts", import.meta.url)),
      // What the client's `#default-sender` import names outside Node.js: fetch, no node:http.
      "#default-sender": fileURLToPath(
        new URL("../../client/src/default-sender.ts", import.meta.url),
      ),
    },
  },
  build: {
    outDir: fileURLToPath(new URL("../dist/inspector/", import.meta.url)),
    emptyOutDir: true,
    // The polyfill is an inline script, which the server's Content-Security-Policy refuses; the
    // browsers the page targets preload modules themselves.
    modulePreload: { polyfill: false },
  },
});
