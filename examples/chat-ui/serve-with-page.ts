import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createServer } from "vite";

const tenxgraph = fileURLToPath(new URL("../../packages/server/bin/tenxgraph.js", import.meta.url));

/**
 * `tenxgraph api` on `config` (port `apiPort`) and a page's Vite dev server (port `pagePort`),
 * which proxies the API's routes to it; Ctrl-C stops both. The example pages' `start.ts`.
 */
export async function serveWithPage(options: {
  config: string;
  viteConfig: string;
  apiPort: number;
  pagePort: number;
  name: string;
}): Promise<void> {
  const { config, viteConfig, apiPort, pagePort, name } = options;
  const api = spawn(
    process.execPath,
    [tenxgraph, "api", "--config", config, "--port", String(apiPort), "--no-inspector"],
    { stdio: "inherit" },
  );
  const page = await createServer({
    configFile: viteConfig,
    server: { host: "127.0.0.1", port: pagePort },
  });
  await page.listen();
  console.log(`${name}: http://127.0.0.1:${pagePort}/ (API on http://127.0.0.1:${apiPort})`);
  process.once("SIGINT", () => {
    api.kill("SIGTERM");
    void page.close().then(() => process.exit(0));
  });
}
